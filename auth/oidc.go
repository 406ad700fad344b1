package auth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// OIDCConfig is one OIDC client: where the provider's discovery document is
// and how this instance is registered there. It is read from the current
// settings at every login, so an admin's change applies at the next login.
type OIDCConfig struct {
	MetadataURL  string // OPENID_PROVIDER_URL: the .well-known/openid-configuration URL
	ClientID     string
	ClientSecret string
	RedirectURL  string
	Scopes       []string
	Audience     string // OAUTH_AUDIENCE: extra `audience` parameter of the authorize request
}

// OIDC runs the authorization-code flow with PKCE against OpenID providers.
// Discovery documents are fetched lazily, on the first login that needs
// them, and cached per metadata URL (never at start-up: a provider that is
// down must not stop the server).
type OIDC struct {
	client *http.Client

	mu        sync.Mutex
	providers map[string]*cachedProvider
}

type cachedProvider struct {
	p          *oidc.Provider
	endSession string // end_session_endpoint, "" when absent
}

// NewOIDC returns a flow runner whose calls to providers use client (nil: a
// client with a 15 s timeout).
func NewOIDC(client *http.Client) *OIDC {
	if client == nil {
		client = &http.Client{Timeout: 15 * time.Second}
	}
	return &OIDC{client: client, providers: map[string]*cachedProvider{}}
}

// FlowState is what a login binds to the browser between /login and the
// callback: the state echoed by the provider, the nonce expected in the ID
// token, the PKCE verifier, and the expiry of the attempt.
type FlowState struct {
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
	Expires  int64  `json:"e"`
}

// NewFlowState makes fresh random values valid for ttl.
func NewFlowState(ttl time.Duration) FlowState {
	return FlowState{State: randomString(), Nonce: randomString(), Verifier: oauth2.GenerateVerifier(),
		Expires: time.Now().Add(ttl).Unix()}
}

func randomString() string {
	b := make([]byte, 24)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (o *OIDC) ctx(ctx context.Context) context.Context { return oidc.ClientContext(ctx, o.client) }

// provider returns the cached provider for the metadata URL, fetching the
// discovery document on first use. A failed fetch is not cached.
func (o *OIDC) provider(ctx context.Context, metadataURL string) (*oidc.Provider, error) {
	if metadataURL == "" {
		return nil, errors.New("OPENID_PROVIDER_URL is not set")
	}
	o.mu.Lock()
	cp := o.providers[metadataURL]
	o.mu.Unlock()
	if cp != nil {
		return cp.p, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metadataURL, nil)
	if err != nil {
		return nil, fmt.Errorf("provider metadata: %w", err)
	}
	resp, err := o.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("provider metadata: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("provider metadata: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("provider metadata: status %d", resp.StatusCode)
	}
	var pc oidc.ProviderConfig
	if err := json.Unmarshal(body, &pc); err != nil {
		return nil, fmt.Errorf("provider metadata: %w", err)
	}
	if pc.IssuerURL == "" || pc.AuthURL == "" || pc.TokenURL == "" || pc.JWKSURL == "" {
		return nil, errors.New("provider metadata: issuer, authorization, token or jwks endpoint missing")
	}
	var extra struct {
		EndSession string `json:"end_session_endpoint"`
	}
	_ = json.Unmarshal(body, &extra)
	cp = &cachedProvider{p: pc.NewProvider(o.ctx(context.Background())), endSession: strings.TrimSpace(extra.EndSession)}
	o.mu.Lock()
	if cached := o.providers[metadataURL]; cached != nil {
		cp = cached
	} else {
		o.providers[metadataURL] = cp
	}
	o.mu.Unlock()
	return cp.p, nil
}

func (c OIDCConfig) oauth2(p *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{ClientID: c.ClientID, ClientSecret: c.ClientSecret, Endpoint: p.Endpoint(),
		RedirectURL: c.RedirectURL, Scopes: c.Scopes}
}

// AuthCodeURL is the provider's authorize URL for this attempt: state,
// nonce, PKCE S256 challenge, and the audience parameter when configured.
func (o *OIDC) AuthCodeURL(ctx context.Context, c OIDCConfig, fs FlowState) (string, error) {
	p, err := o.provider(ctx, c.MetadataURL)
	if err != nil {
		return "", err
	}
	opts := []oauth2.AuthCodeOption{oidc.Nonce(fs.Nonce), oauth2.S256ChallengeOption(fs.Verifier)}
	if c.Audience != "" {
		opts = append(opts, oauth2.SetAuthURLParam("audience", c.Audience))
	}
	return c.oauth2(p).AuthCodeURL(fs.State, opts...), nil
}

// OIDCLogin is a completed login: the verified claims (ID token claims,
// back-filled from the userinfo endpoint) and the token response.
type OIDCLogin struct {
	Claims map[string]any
	Token  *oauth2.Token
	// Raw is the token response to store (access, refresh and ID tokens,
	// token type, expires_at), as JSON.
	Raw []byte
}

// ErrIDToken means the provider's ID token failed verification (signature,
// issuer, audience, expiry or nonce).
var ErrIDToken = errors.New("invalid ID token")

// Exchange trades the code for tokens and verifies the ID token: signature
// against the provider's keys, issuer, audience (the client id), expiry and
// the nonce bound to this attempt. When the ID token lacks an e-mail, the
// userinfo endpoint is asked and its claims fill the missing keys
// (COMPAT.md §12.2 step 2).
func (o *OIDC) Exchange(ctx context.Context, c OIDCConfig, fs FlowState, code string) (OIDCLogin, error) {
	p, err := o.provider(ctx, c.MetadataURL)
	if err != nil {
		return OIDCLogin{}, err
	}
	cctx := o.ctx(ctx)
	tok, err := c.oauth2(p).Exchange(cctx, code, oauth2.VerifierOption(fs.Verifier))
	if err != nil {
		return OIDCLogin{}, fmt.Errorf("code exchange: %w", err)
	}
	rawID, _ := tok.Extra("id_token").(string)
	if rawID == "" {
		return OIDCLogin{}, fmt.Errorf("%w: the token response has no id_token", ErrIDToken)
	}
	idt, err := p.VerifierContext(cctx, &oidc.Config{ClientID: c.ClientID}).Verify(cctx, rawID)
	if err != nil {
		return OIDCLogin{}, fmt.Errorf("%w: %v", ErrIDToken, err)
	}
	if idt.Nonce != fs.Nonce {
		return OIDCLogin{}, fmt.Errorf("%w: nonce mismatch", ErrIDToken)
	}
	claims := map[string]any{}
	if err := idt.Claims(&claims); err != nil {
		return OIDCLogin{}, fmt.Errorf("%w: %v", ErrIDToken, err)
	}
	if s, _ := claims["email"].(string); s == "" && p.UserInfoEndpoint() != "" {
		if ui, err := p.UserInfo(cctx, oauth2.StaticTokenSource(tok)); err == nil {
			extra := map[string]any{}
			// The userinfo subject must be the ID token's (OIDC Core 5.3.2).
			if ui.Claims(&extra) == nil && ui.Subject == idt.Subject {
				for k, v := range extra {
					if _, has := claims[k]; !has {
						claims[k] = v
					}
				}
			}
		}
	}
	raw, err := json.Marshal(map[string]any{
		"access_token": tok.AccessToken, "token_type": tok.TokenType, "refresh_token": tok.RefreshToken,
		"id_token": rawID, "expires_at": expiry(tok), "scope": tok.Extra("scope"),
	})
	if err != nil {
		return OIDCLogin{}, err
	}
	return OIDCLogin{Claims: claims, Token: tok, Raw: raw}, nil
}

func expiry(t *oauth2.Token) int64 {
	if t.Expiry.IsZero() {
		return 0
	}
	return t.Expiry.Unix()
}

// Expiry is the access token's expiry (unix s), 0 when the provider gave none.
func (l OIDCLogin) Expiry() int64 { return expiry(l.Token) }

// EndSessionURL is the provider's end_session_endpoint from its cached
// discovery document, "" when unknown or not fetched yet (sign-out never
// waits on the provider).
func (o *OIDC) EndSessionURL(metadataURL string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if cp := o.providers[metadataURL]; cp != nil {
		return cp.endSession
	}
	return ""
}
