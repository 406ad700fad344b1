// Package config owns Hearth's configuration: the typed Config struct, parsing of every
// environment variable of SPEC.md §1, §5 and §8 (plus the auth, permission, connection and
// task settings of COMPAT.md), the persistent-settings overlay of SPEC.md §1 rules 1-6, and
// where each value came from (env, database, default, admin).
//
// It is a leaf package: it imports nothing internal. The database is reached through the
// small Store interface declared here and implemented by store/.
//
// # Shape
//
// One definition table (vars.go, definitions) describes every variable: env name,
// persistent key, Kind, default in env syntax, section, secret and restart flags. Each
// variable has exactly one Config field tagged `env:"<NAME>"`; the binding is checked when
// Settings is built and by the tests. Parsing lives in small helpers in parse.go.
//
// # Invariants
//
//   - Snapshot immutability: Settings.Get returns a *Config that is never modified after it
//     is published. Set copies the current Config, replaces the changed fields with fresh
//     values (converters never alias their input) and swaps the pointer atomically. Readers
//     must not modify maps or slices they read from a Config either.
//   - All-or-nothing Set: every change is validated before anything happens; one invalid
//     value, unknown name or env-only name rejects the whole call, and a failed SaveConfig
//     also leaves memory unchanged. Writers are serialised, so the store sees edits in the
//     same order as memory.
//   - No package-level mutable state: the table is rebuilt by a function; Vars returns a copy.
//
// # Persistence rules
//
// ENABLE_PERSISTENT_CONFIG=true (default): on every start, persistent keys missing from the
// store are seeded with their env/default value in one SaveConfig; keys present in the store
// win over the environment (Source "database"). A stored value that no longer parses for its
// type is ignored with a Warning and left in place. ENABLE_PERSISTENT_CONFIG=false: the store
// is neither read nor written; env always wins; Set changes memory only (Source "admin").
// ENABLE_OAUTH_PERSISTENT_CONFIG (default true, per SPEC; upstream defaults to false) does
// the same for the oauth section only; every persistent oauth key starts with "oauth.".
//
// Hearth's decisions on what is env-only. SPEC §1 says its variables are persistent unless
// marked "env only"; Hearth additionally keeps these env-only because they are process-level
// or bootstrap secrets that must not be frozen in (or leaked into) the database:
// PORT, HOST, DATA_DIR, ENV, WEBUI_ADMIN_EMAIL, WEBUI_ADMIN_PASSWORD, WEBUI_ADMIN_NAME,
// WEBUI_BUILD_HASH, THREAD_POOL_SIZE, LICENSE_KEY, WEBUI_SECRET_KEY, ENABLE_PASSWORD_AUTH,
// ENABLE_PERSISTENT_CONFIG, ENABLE_OAUTH_PERSISTENT_CONFIG, CUSTOM_API_KEY_HEADER,
// DATABASE_URL, REDIS_URL. Also env-only, as upstream has them in env.py and no admin
// endpoint edits them (a persisted copy could then never be changed again):
// WEBUI_AUTH, WEBUI_AUTH_COOKIE_*, ENABLE_INITIAL_ADMIN_SIGNUP, ENABLE_PASSWORD_VALIDATION,
// PASSWORD_VALIDATION_REGEX_PATTERN, PASSWORD_VALIDATION_HINT,
// WEBUI_AUTH_SIGNOUT_REDIRECT_URL, RELEASE_CHANNEL, DEPLOYMENT_ID, the trusted-header and
// SCIM variables, the two OAuth encryption keys, and the SPEC §8 limits. The SPEC's own
// "env only" variables (ENABLE_EASTER_EGGS, IFRAME_CSP, ENABLE_PROFILE_IMAGE_URL_FORWARDING,
// PROFILE_IMAGE_ALLOWED_MIME_TYPES) stay env-only. ENABLE_ADMIN_EXPORT and
// ENABLE_ADMIN_ANALYTICS are persistent but flagged RestartNeeded.
//
// # Environment parsing
//
// Booleans follow Open WebUI: "true", "1", "yes", "on" (any case) are true, anything else
// false (an unrecognised word also yields a Warning). An invalid int, enum, JSON value or
// duration falls back to the default with a Warning. An empty variable counts as unset,
// except for non-secret strings where "" is a real value (OAUTH_PICTURE_CLAIM="" disables
// picture updates). Aliases are read when the main name is unset (OLLAMA_BASE_URL,
// OPENAI_API_KEY, ENABLE_SCIM, ...); OAUTH_SESSION_TOKEN_ENCRYPTION_KEY and
// OAUTH_CLIENT_INFO_ENCRYPTION_KEY fall back to WEBUI_SECRET_KEY that way. ";"-separated
// lists are positional (empty entries kept: OPENAI_API_KEYS[i] belongs to
// OPENAI_API_BASE_URLS[i]); ","-separated lists drop empty entries.
// PASSWORD_VALIDATION_REGEX_PATTERN is Go RE2 syntax (no look-aheads); empty means the
// built-in rule. The default permission tree is one variable, USER_PERMISSIONS (key
// user.permissions), whose leaves come from USER_PERMISSIONS_<SECTION>_<NAME>.
//
// # Secrets
//
// Var.Secret marks values redacted by Explain. Two secrets are persistent, OPENAI_API_KEYS
// and OAUTH_CLIENT_SECRET; this package hands them to Store in plain JSON, and encrypting
// them at rest is the store layer's job (keyed on Var.Secret). Value does not redact: it
// serves the admin endpoints, which show these values to admins as upstream does.
package config
