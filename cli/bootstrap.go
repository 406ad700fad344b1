package cli

import (
	"context"
	"strings"

	"hearth/auth"
	"hearth/config"
	"hearth/store"
)

// bootstrapAdmin creates the admin account named by WEBUI_ADMIN_EMAIL and
// WEBUI_ADMIN_PASSWORD when both are set and no account exists yet (SPEC §1),
// then turns sign-up off through the settings, so it is persisted like an
// admin's edit (and only lasts until restart with ENABLE_PERSISTENT_CONFIG=false).
// It returns the e-mail of the account it created, "" when it did nothing.
// Once any account exists it is a no-op, so the variables may stay set.
//
// It runs before the server listens, so no sign-up can race with it.
func bootstrapAdmin(ctx context.Context, st *store.Store, settings *config.Settings, pw *auth.Passwords) (string, error) {
	cfg := settings.Get()
	email := strings.ToLower(strings.TrimSpace(cfg.AdminBootstrapEmail))
	if email == "" || cfg.AdminBootstrapPassword == "" {
		return "", nil
	}
	n, err := st.CountUsers(ctx)
	if err != nil || n > 0 {
		return "", err
	}
	hash, err := pw.Hash(cfg.AdminBootstrapPassword)
	if err != nil {
		return "", err
	}
	name := strings.TrimSpace(cfg.AdminBootstrapName)
	if name == "" {
		name = "Admin"
	}
	if _, err := st.CreateUser(ctx, store.NewUser{
		Email: email, Name: name, PasswordHash: hash, Role: "admin", ForceRole: true,
	}); err != nil {
		return "", err
	}
	if err := settings.Set(ctx, map[string]any{"ENABLE_SIGNUP": false}); err != nil {
		return "", err
	}
	return email, nil
}
