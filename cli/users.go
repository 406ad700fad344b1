package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	ucli "github.com/urfave/cli/v2"

	"hearth/auth"
	"hearth/store"
)

var roles = []string{"pending", "user", "admin"}

func (a *app) migrateCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "migrate",
		Usage: "create or upgrade the database and print its schema version",
		Flags: []ucli.Flag{dataDirFlag()},
		Action: func(c *ucli.Context) error {
			dir, _ := a.dataDir(c)
			st, err := openStore(c.Context, dir, true)
			if err != nil {
				return err
			}
			path := st.Path()
			if err := st.Close(); err != nil {
				return err
			}
			v, err := store.SchemaVersionOf(c.Context, path)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "%s: schema version %d\n", path, v)
			return nil
		},
	}
}

// openStore opens $dir/hearth.db, creating dir (0700) and the database when
// create is set; otherwise the database must exist.
func openStore(ctx context.Context, dir string, create bool) (*store.Store, error) {
	path := filepath.Join(dir, dbFile)
	if create {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("data directory: %w", err)
		}
	} else if _, err := existingDB(dir); err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, path)
	if err != nil {
		if errors.Is(err, store.ErrSchemaTooNew) {
			return nil, ucli.Exit(fmt.Sprintf("%s: %v", path, err), 1)
		}
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	return st, nil
}

func (a *app) userCommand() *ucli.Command {
	email := func(usage string) ucli.Flag {
		return &ucli.StringFlag{Name: "email", Usage: usage, Required: true}
	}
	password := &ucli.StringFlag{Name: "password", Required: true,
		Usage: "password (at most 72 bytes); - reads one line from standard input, keeping it out of ps"}
	return &ucli.Command{
		Name:  "user",
		Usage: "manage accounts directly in the database (works while the server runs)",
		Subcommands: []*ucli.Command{
			{
				Name:  "create",
				Usage: "create an account",
				Description: "Without --role the account gets the role \"user\", or \"admin\" when it is the first\n" +
					"account (as with sign-up); an explicit --role is used as given.",
				Flags: []ucli.Flag{
					email("e-mail address (stored lower-case)"),
					&ucli.StringFlag{Name: "name", Usage: "display name (default: the part of the e-mail before @)"},
					password,
					&ucli.StringFlag{Name: "role", Value: "user", Usage: "pending, user or admin"},
					dataDirFlag(),
				},
				Action: a.userCreate,
			},
			{
				Name:   "list",
				Usage:  "list accounts, oldest first",
				Flags:  []ucli.Flag{&ucli.BoolFlag{Name: "json", Usage: "print JSON"}, dataDirFlag()},
				Action: a.userList,
			},
			{
				Name:   "reset-password",
				Usage:  "set an account's password (the primary admin's too)",
				Flags:  []ucli.Flag{email("account e-mail"), password, dataDirFlag()},
				Action: a.userResetPassword,
			},
			{
				Name:  "set-role",
				Usage: "change an account's role",
				Flags: []ucli.Flag{
					email("account e-mail"),
					&ucli.StringFlag{Name: "role", Usage: "pending, user or admin", Required: true},
					dataDirFlag(),
				},
				Action: a.userSetRole,
			},
		},
	}
}

func validRole(r string) error {
	for _, x := range roles {
		if r == x {
			return nil
		}
	}
	return ucli.Exit(fmt.Sprintf("--role: %q is not one of %s", r, strings.Join(roles, ", ")), 2)
}

// operator is the actor an operator command uses on account target: an admin
// with the target's own id. The store's primary-admin rule protects the first
// account from *other* admins; the console of the machine is not another
// admin, so it must still be able to reset that account's password. The rule
// that the primary admin keeps the admin role still applies.
func operator(target store.User) store.Actor {
	return store.Actor{UserID: target.ID, Role: "admin"}
}

func (a *app) userCreate(c *ucli.Context) error {
	email := strings.ToLower(strings.TrimSpace(c.String("email")))
	if at := strings.IndexByte(email, '@'); at <= 0 || at == len(email)-1 {
		return ucli.Exit(fmt.Sprintf("--email: %q is not an e-mail address", c.String("email")), 2)
	}
	role := c.String("role")
	if err := validRole(role); err != nil {
		return err
	}
	name := strings.TrimSpace(c.String("name"))
	if name == "" {
		name = email[:strings.IndexByte(email, '@')]
	}
	hash, err := a.passwordHash(c)
	if err != nil {
		return err
	}
	dir, _ := a.dataDir(c)
	st, err := openStore(c.Context, dir, true)
	if err != nil {
		return err
	}
	defer st.Close()
	u, err := st.CreateUser(c.Context, store.NewUser{
		Email: email, Name: name, PasswordHash: hash, Role: role, ForceRole: c.IsSet("role"),
	})
	if errors.Is(err, store.ErrConflict) {
		return ucli.Exit(fmt.Sprintf("an account with e-mail %s already exists", email), 1)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "created %s (%s), role %s, id %s\n", u.Email, u.Name, u.Role, u.ID)
	return nil
}

type userJSON struct {
	ID           string   `json:"id"`
	Email        string   `json:"email"`
	Name         string   `json:"name"`
	Role         string   `json:"role"`
	CreatedAt    int64    `json:"created_at"`
	LastActiveAt int64    `json:"last_active_at"`
	GroupIDs     []string `json:"group_ids"`
}

func (a *app) userList(c *ucli.Context) error {
	dir, _ := a.dataDir(c)
	st, err := openStore(c.Context, dir, false)
	if err != nil {
		return err
	}
	defer st.Close()
	rows, _, err := st.ListUsers(c.Context, store.Actor{Role: "admin"},
		store.UserFilter{OrderBy: "created_at", Direction: "asc"})
	if err != nil {
		return err
	}
	if c.Bool("json") {
		out := make([]userJSON, 0, len(rows))
		for _, r := range rows {
			out = append(out, userJSON{ID: r.ID, Email: r.Email, Name: r.Name, Role: r.Role,
				CreatedAt: r.CreatedAt, LastActiveAt: r.LastActiveAt, GroupIDs: r.GroupIDs})
		}
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "EMAIL\tNAME\tROLE\tCREATED\tID")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Email, oneLine(r.Name), r.Role,
			time.Unix(r.CreatedAt, 0).UTC().Format(time.RFC3339), r.ID)
	}
	return tw.Flush()
}

// findUser opens the database and loads the account named by --email.
func (a *app) findUser(c *ucli.Context) (*store.Store, store.User, error) {
	dir, _ := a.dataDir(c)
	st, err := openStore(c.Context, dir, false)
	if err != nil {
		return nil, store.User{}, err
	}
	u, err := st.UserByEmail(c.Context, c.String("email"))
	if err != nil {
		st.Close()
		if errors.Is(err, store.ErrNotFound) {
			return nil, u, ucli.Exit(fmt.Sprintf("no account with e-mail %s", c.String("email")), 1)
		}
		return nil, u, err
	}
	return st, u, nil
}

func (a *app) userResetPassword(c *ucli.Context) error {
	hash, err := a.passwordHash(c)
	if err != nil {
		return err
	}
	st, u, err := a.findUser(c)
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := st.UpdateUser(c.Context, operator(u), u.ID, store.UserPatch{PasswordHash: &hash}); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "password of %s changed\n", u.Email)
	return nil
}

func (a *app) userSetRole(c *ucli.Context) error {
	role := c.String("role")
	if err := validRole(role); err != nil {
		return err
	}
	st, u, err := a.findUser(c)
	if err != nil {
		return err
	}
	defer st.Close()
	_, err = st.UpdateUser(c.Context, operator(u), u.ID, store.UserPatch{Role: &role})
	if errors.Is(err, store.ErrForbidden) {
		return ucli.Exit(fmt.Sprintf("%s is the primary admin (the first account) and keeps the admin role", u.Email), 1)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "%s: role %s → %s\n", u.Email, u.Role, role)
	return nil
}

// passwordHash hashes --password, reading it from standard input when it is "-".
func (a *app) passwordHash(c *ucli.Context) (string, error) {
	pw := c.String("password")
	if pw == "-" {
		line, err := bufio.NewReader(a.stdin).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("read password from standard input: %w", err)
		}
		pw = strings.TrimRight(line, "\r\n")
	}
	if pw == "" {
		return "", ucli.Exit("--password: empty password", 2)
	}
	hash, err := auth.NewPasswords(a.bcryptCost).Hash(pw)
	if err != nil {
		return "", fmt.Errorf("--password: %w", err)
	}
	return hash, nil
}

// oneLine keeps tab-aligned output aligned.
func oneLine(s string) string {
	return strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(s)
}
