package config

// Vars returns the static variable definitions, in table order. The slice and everything in
// it is a fresh copy: callers may keep or modify it without affecting the package.
func Vars() []Var {
	defs := definitions()
	for i := range defs {
		defs[i].Enum = append([]string(nil), defs[i].Enum...)
		defs[i].Aliases = append([]string(nil), defs[i].Aliases...)
	}
	return defs
}

// v builds one row. An empty key makes the variable env-only.
func v(sec Section, kind Kind, name, key, def, desc string) Var {
	d := Var{Name: name, Key: key, Type: kind, Default: def, Persistent: key != "", Section: sec, Description: desc}
	if kind == KindList {
		d.Sep = ","
	}
	return d
}

func (d Var) secret() Var                { d.Secret = true; return d }
func (d Var) restart() Var               { d.RestartNeeded = true; return d }
func (d Var) oneOf(vals ...string) Var   { d.Enum = vals; return d }
func (d Var) alias(names ...string) Var  { d.Aliases = names; return d }
func (d Var) between(lo, hi int) Var     { d.Min, d.Max = lo, hi; return d }
func (d Var) separatedBy(sep string) Var { d.Sep = sep; return d }

// definitions is THE table: one row per variable. Persistent keys follow Open WebUI's
// config.py where it has one (COMPAT §13.1); the rest use the same dotted style.
// Every row has exactly one Config field with the tag env:"<Name>".
func definitions() []Var {
	const (
		srv   = SectionServer
		gen   = SectionGeneral
		auth  = SectionAuth
		perm  = SectionPermissions
		hdr   = SectionTrustedHeader
		scim  = SectionSCIM
		oauth = SectionOAuth
		lim   = SectionLimits
		conn  = SectionConnections
		task  = SectionTasks
		rag   = SectionRAG
	)
	return []Var{
		// Process-level and bootstrap settings: env only (see doc.go for why).
		v(srv, KindInt, "PORT", "", "8080", "Listening port (the serve --port flag wins).").between(1, 65535),
		v(srv, KindString, "HOST", "", "0.0.0.0", "Listening address."),
		v(srv, KindString, "DATA_DIR", "", "./data", "Directory holding hearth.db and secret_key."),
		v(srv, KindEnum, "ENV", "", "dev", "dev exposes interactive API docs at /docs.").oneOf("dev", "prod"),
		v(srv, KindString, "DATABASE_URL", "", "", "Empty = SQLite in DATA_DIR; postgres://... later.").secret(),
		v(srv, KindString, "REDIS_URL", "", "", "Empty = in-process pub/sub, revocation and rate limits.").secret(),
		v(srv, KindInt, "THREAD_POOL_SIZE", "", "0", "Blocking-call pool size; 0 = 40."),
		v(srv, KindString, "WEBUI_BUILD_HASH", "", "dev-build", "Build identifier."),
		v(srv, KindString, "LICENSE_KEY", "", "", "Licence key for enterprise use.").secret(),
		v(srv, KindString, "DEPLOYMENT_ID", "", "", "Reported by /api/version."),
		v(srv, KindEnum, "RELEASE_CHANNEL", "", "stable", "Outlet-filter behaviour channel (SPEC §9).").oneOf("stable", "dev"),
		v(srv, KindBool, "ENABLE_PERSISTENT_CONFIG", "", "true", "Persistent variables are stored; stored values win over env."),
		v(srv, KindBool, "ENABLE_OAUTH_PERSISTENT_CONFIG", "", "true", "Same as ENABLE_PERSISTENT_CONFIG, for the oauth section only."),

		// SPEC §1 general variables.
		v(gen, KindString, "WEBUI_URL", "webui.url", "http://localhost:3000", "Public address; used for OAuth redirect URIs."),
		v(gen, KindString, "WEBUI_NAME", "webui.name", "Hearth", "Main display name."),
		v(gen, KindBool, "ENABLE_SIGNUP", "ui.enable_signup", "true", "Allows account creation."),
		v(gen, KindBool, "ENABLE_SIGNUP_PASSWORD_CONFIRMATION", "ui.enable_signup_password_confirmation", "false", "Confirm-password field on sign-up."),
		v(gen, KindString, "WEBUI_ADMIN_EMAIL", "", "", "Bootstrap admin e-mail (first start, no users)."),
		v(gen, KindString, "WEBUI_ADMIN_PASSWORD", "", "", "Bootstrap admin password (stored hashed).").secret(),
		v(gen, KindString, "WEBUI_ADMIN_NAME", "", "Admin", "Bootstrap admin display name."),
		v(gen, KindBool, "ENABLE_LOGIN_FORM", "ui.enable_login_form", "true", "Shows the e-mail/password form."),
		v(gen, KindBool, "ENABLE_PASSWORD_CHANGE_FORM", "ui.enable_password_change_form", "true", "Shows the change-password control."),
		v(gen, KindBool, "ENABLE_PASSWORD_AUTH", "", "true", "false refuses password sign-in (/signin, /ldap); needs ENABLE_OAUTH_SIGNUP."),
		v(gen, KindString, "DEFAULT_LOCALE", "ui.default_locale", "en", "Default language."),
		v(gen, KindString, "DEFAULT_MODELS", "ui.default_models", "", "Default model(s), comma-separated."),
		v(gen, KindString, "DEFAULT_PINNED_MODELS", "ui.default_pinned_models", "", "Model ids pinned for new users, comma-separated."),
		v(gen, KindJSON, "DEFAULT_MODEL_METADATA", "models.default_metadata", "{}", "Global default model metadata (JSON object)."),
		v(gen, KindJSON, "DEFAULT_MODEL_PARAMS", "models.default_params", "{}", "Global default generation parameters (JSON object)."),
		v(gen, KindEnum, "DEFAULT_USER_ROLE", "ui.default_user_role", "pending", "Role given to new users.").oneOf("pending", "user", "admin"),
		v(gen, KindString, "DEFAULT_GROUP_ID", "ui.default_group_id", "", "Group assigned to new users."),
		v(gen, KindEnum, "DEFAULT_GROUP_SHARE_PERMISSION", "groups.default_share_permission", "members", "Initial who-may-share of new groups.").oneOf("members", "true", "false"),
		v(gen, KindString, "PENDING_USER_OVERLAY_TITLE", "ui.pending_user_overlay_title", "", "Pending-user overlay title."),
		v(gen, KindString, "PENDING_USER_OVERLAY_CONTENT", "ui.pending_user_overlay_content", "", "Pending-user overlay text."),
		v(gen, KindBool, "ENABLE_CALENDAR", "calendar.enable", "true", "Calendar feature."),
		v(gen, KindBool, "ENABLE_CHANNELS", "channels.enable", "false", "Channels feature."),
		v(gen, KindBool, "ENABLE_FOLDERS", "folders.enable", "true", "Chat folders."),
		v(gen, KindBool, "ENABLE_NOTES", "notes.enable", "true", "Notes."),
		v(gen, KindBool, "ENABLE_MEMORIES", "memories.enable", "true", "Long-term memories."),
		v(gen, KindBool, "ENABLE_MEMORY_SYSTEM_CONTEXT", "memories.enable_system_context", "false", "Inject memories into the system context."),
		v(gen, KindBool, "ENABLE_AUTOMATIONS", "automations.enable", "true", "Automations (false: scheduler skips, API 403)."),
		v(gen, KindBool, "ENABLE_USER_WEBHOOKS", "ui.enable_user_webhooks", "false", "User webhooks."),
		v(gen, KindString, "WEBHOOK_URL", "webhook_url", "", "Webhook target for chat-app integrations."),
		v(gen, KindBool, "ENABLE_ADMIN_EXPORT", "admin.enable_export", "true", "Admin export endpoints.").restart(),
		v(gen, KindBool, "ENABLE_ADMIN_CHAT_ACCESS", "admin.enable_chat_access", "true", "Admin access to other users' chats."),
		v(gen, KindBool, "ENABLE_ADMIN_ANALYTICS", "admin.enable_analytics", "true", "Analytics routes registered.").restart(),
		v(gen, KindBool, "BYPASS_ADMIN_ACCESS_CONTROL", "access_control.bypass_admin", "true", "Admin lists show all users' workspace items."),
		v(gen, KindBool, "BYPASS_MODEL_ACCESS_CONTROL", "access_control.bypass_model", "false", "Every user may use every model."),
		v(gen, KindBool, "ENABLE_CUSTOM_MODEL_FALLBACK", "models.enable_custom_model_fallback", "false", "Missing base model falls back to the first default model."),
		v(gen, KindBool, "SHOW_ADMIN_DETAILS", "auth.admin.show", "true", "Shows admin contact details in the UI."),
		v(gen, KindString, "ADMIN_EMAIL", "auth.admin.email", "", "Admin contact e-mail."),
		v(gen, KindBool, "ENABLE_PUBLIC_ACTIVE_USERS_COUNT", "ui.enable_public_active_users_count", "true", "false: only admins see the active-user count."),
		v(gen, KindBool, "ENABLE_USER_STATUS", "users.enable_status", "true", "User status feature and endpoints."),
		v(gen, KindBool, "ENABLE_COMMUNITY_SHARING", "ui.enable_community_sharing", "true", "Community sharing."),
		v(gen, KindBool, "ENABLE_MESSAGE_RATING", "ui.enable_message_rating", "true", "Message rating."),
		v(gen, KindBool, "ENABLE_EASTER_EGGS", "", "true", "Optional playful UI features."),
		v(gen, KindString, "RESPONSE_WATERMARK", "ui.watermark", "", "Text appended when a message is copied."),
		v(gen, KindString, "IFRAME_CSP", "", "", "CSP injected into sandboxed frames; empty = none."),
		v(gen, KindBool, "ENABLE_REALTIME_CHAT_SAVE", "chat.enable_realtime_save", "false", "Write every streamed chunk to the database."),
		v(gen, KindBool, "ENABLE_CHAT_RESPONSE_BASE64_IMAGE_URL_CONVERSION", "chat.enable_response_base64_image_url_conversion", "false", "Upload inline base64 images (>1 KB) in responses."),
		v(gen, KindBool, "ENABLE_IMAGE_CONTENT_TYPE_EXTENSION_FALLBACK", "files.enable_image_content_type_extension_fallback", "false", "Extension-to-type fallback for images."),
		v(gen, KindBool, "ENABLE_PROFILE_IMAGE_URL_FORWARDING", "", "true", "Profile image endpoint may 302 to external URLs."),
		v(gen, KindList, "PROFILE_IMAGE_ALLOWED_MIME_TYPES", "", "image/png,image/jpeg,image/gif,image/webp", "Allowed types for data: URI profile images."),
		v(gen, KindInt, "CHAT_RESPONSE_STREAM_DELTA_CHUNK_SIZE", "chat.response_stream_delta_chunk_size", "1", "Minimum tokens batched per streamed chunk.").between(1, 0),
		v(gen, KindBool, "ENABLE_RESPONSES_API_STATEFUL", "openai.enable_responses_api_stateful", "false", "Forward previous_response_id upstream."),
		v(gen, KindBanners, "WEBUI_BANNERS", "ui.banners", "[]", "Banner objects (JSON list)."),
		v(gen, KindString, "EXTERNAL_PWA_MANIFEST_URL", "ui.external_pwa_manifest_url", "", "External /manifest.json source."),
		v(gen, KindOptionalInt, "FOLDER_MAX_FILE_COUNT", "folders.max_file_count", "", "Files per folder; empty = unlimited."),
		v(gen, KindOptionalInt, "AUTOMATION_MAX_COUNT", "automations.max_count", "", "Automations per non-admin user; empty = unlimited."),
		v(gen, KindOptionalInt, "AUTOMATION_MIN_INTERVAL", "automations.min_interval", "", "Minimum recurrence (s) for non-admins; empty = none."),

		// Authentication and API keys (COMPAT §2).
		v(auth, KindBool, "WEBUI_AUTH", "", "true", "false = single-user mode without sign-in."),
		v(auth, KindString, "WEBUI_SECRET_KEY", "", "", "JWT signing secret; generated into DATA_DIR when empty.").secret().alias("WEBUI_JWT_SECRET_KEY"),
		v(auth, KindDuration, "JWT_EXPIRES_IN", "auth.jwt_expiry", "4w", "JWT lifetime (e.g. 4w, 1h30m); -1 or 0 = no expiry."),
		v(auth, KindBool, "ENABLE_API_KEYS", "auth.api_key.enable", "true", "Users may create sk- API keys.").alias("ENABLE_API_KEY"),
		v(auth, KindBool, "ENABLE_API_KEYS_ENDPOINT_RESTRICTIONS", "auth.api_key.endpoint_restrictions", "false", "Limit API keys to API_KEYS_ALLOWED_ENDPOINTS.").alias("ENABLE_API_KEY_ENDPOINT_RESTRICTIONS"),
		v(auth, KindString, "API_KEYS_ALLOWED_ENDPOINTS", "auth.api_key.allowed_endpoints", "", "Comma-separated path prefixes API keys may use.").alias("API_KEY_ALLOWED_ENDPOINTS"),
		v(auth, KindString, "CUSTOM_API_KEY_HEADER", "", "x-api-key", "Header carrying an API key besides Authorization."),
		v(auth, KindEnum, "WEBUI_AUTH_COOKIE_SAME_SITE", "", "lax", "SameSite of the token cookie.").oneOf("lax", "strict", "none"),
		v(auth, KindBool, "WEBUI_AUTH_COOKIE_SECURE", "", "false", "Secure flag of the token cookie."),
		v(auth, KindBool, "ENABLE_LDAP", "ldap.enable", "false", "LDAP sign-in."),
		v(auth, KindBool, "ENABLE_INITIAL_ADMIN_SIGNUP", "", "false", "Allow first sign-up even when the login form is off."),
		v(auth, KindBool, "ENABLE_PASSWORD_VALIDATION", "", "false", "Enforce PASSWORD_VALIDATION_REGEX_PATTERN on new passwords."),
		v(auth, KindRegex, "PASSWORD_VALIDATION_REGEX_PATTERN", "", "", "Go RE2 pattern; empty = built-in rule (lower, upper, digit, symbol, >=8)."),
		v(auth, KindString, "PASSWORD_VALIDATION_HINT", "", "", "Message shown when the password rule fails."),
		v(auth, KindString, "WEBUI_AUTH_SIGNOUT_REDIRECT_URL", "", "", "Redirect target after sign-out."),

		// Default permission tree (COMPAT §14.3); env per leaf: USER_PERMISSIONS_<SECTION>_<NAME>.
		v(perm, KindPermissions, "USER_PERMISSIONS", "user.permissions", "", "Default user permission tree (JSON)."),

		// Trusted header sign-in (SPEC §5).
		v(hdr, KindString, "WEBUI_AUTH_TRUSTED_EMAIL_HEADER", "", "", "Header with the user's e-mail; enables trusted-header sign-in."),
		v(hdr, KindString, "WEBUI_AUTH_TRUSTED_NAME_HEADER", "", "", "Header with the name for new users."),
		v(hdr, KindString, "WEBUI_AUTH_TRUSTED_GROUPS_HEADER", "", "", "Header with comma-separated group names."),
		v(hdr, KindString, "WEBUI_AUTH_TRUSTED_ROLE_HEADER", "", "", "Header with the role: admin, user or pending."),

		// SCIM provisioning (SPEC §5): env only.
		v(scim, KindBool, "SCIM_ENABLED", "", "false", "Turns SCIM on.").alias("ENABLE_SCIM"),
		v(scim, KindString, "SCIM_TOKEN", "", "", "SCIM bearer token; required when SCIM is on.").secret(),
		v(scim, KindString, "SCIM_AUTH_PROVIDER", "", "", "OAuth provider name for externalId values."),

		// OAuth / OIDC (SPEC §5): persistence governed by ENABLE_OAUTH_PERSISTENT_CONFIG.
		v(oauth, KindBool, "ENABLE_OAUTH_SIGNUP", "oauth.enable_signup", "false", "Account creation on OAuth login."),
		v(oauth, KindBool, "OAUTH_MERGE_ACCOUNTS_BY_EMAIL", "oauth.merge_accounts_by_email", "false", "Merge logins by matching e-mail (insecure without verified e-mails)."),
		v(oauth, KindBool, "OAUTH_UPDATE_PICTURE_ON_LOGIN", "oauth.update_picture_on_login", "false", "Refresh the profile picture at login."),
		v(oauth, KindString, "OAUTH_PICTURE_CLAIM", "oauth.oidc.avatar_claim", "picture", "Claim holding the picture; empty disables updates."),
		v(oauth, KindString, "OAUTH_SESSION_TOKEN_ENCRYPTION_KEY", "", "", "Encrypts stored OAuth tokens; default WEBUI_SECRET_KEY.").secret().alias("WEBUI_SECRET_KEY", "WEBUI_JWT_SECRET_KEY"),
		v(oauth, KindString, "OAUTH_CLIENT_INFO_ENCRYPTION_KEY", "", "", "Encrypts stored OAuth client info; default WEBUI_SECRET_KEY.").secret().alias("WEBUI_SECRET_KEY", "WEBUI_JWT_SECRET_KEY"),
		v(oauth, KindBool, "ENABLE_OAUTH_ID_TOKEN_COOKIE", "oauth.enable_id_token_cookie", "true", "Legacy oauth_id_token cookie."),
		v(oauth, KindBool, "ENABLE_OAUTH_TOKEN_EXCHANGE", "oauth.enable_token_exchange", "false", "Token exchange endpoint."),
		v(oauth, KindBool, "ENABLE_OAUTH_BACKCHANNEL_LOGOUT", "oauth.enable_backchannel_logout", "false", "Back-channel logout endpoint."),
		v(oauth, KindInt, "OAUTH_MAX_SESSIONS_PER_USER", "oauth.max_sessions_per_user", "10", "OAuth sessions per user and provider; oldest pruned.").between(1, 0),
		v(oauth, KindString, "OAUTH_CLIENT_ID", "oauth.oidc.client_id", "", "OIDC client id."),
		v(oauth, KindString, "OAUTH_CLIENT_SECRET", "oauth.oidc.client_secret", "", "OIDC client secret.").secret(),
		v(oauth, KindString, "OPENID_PROVIDER_URL", "oauth.oidc.provider_url", "", "OIDC well-known URL."),
		v(oauth, KindString, "OPENID_REDIRECT_URI", "oauth.oidc.redirect_uri", "", "Must be <WEBUI_URL>/oauth/oidc/callback."),
		v(oauth, KindString, "OAUTH_PROVIDER_NAME", "oauth.oidc.provider_name", "SSO", "Login button label."),
		v(oauth, KindString, "OAUTH_SCOPES", "oauth.oidc.scopes", "openid email profile", "Requested scopes."),
		v(oauth, KindString, "OAUTH_AUDIENCE", "oauth.oidc.audience", "", "Extra audience parameter for the authorize request."),
		v(oauth, KindBool, "ENABLE_OAUTH_ROLE_MANAGEMENT", "oauth.enable_role_mapping", "false", "Roles from the OAuth roles claim."),
		v(oauth, KindString, "OAUTH_ROLES_CLAIM", "oauth.roles_claim", "roles", "Claim holding roles (dot-nested)."),
		v(oauth, KindString, "OAUTH_ALLOWED_ROLES", "oauth.allowed_roles", "", "Comma list of roles mapped to user."),
		v(oauth, KindString, "OAUTH_ADMIN_ROLES", "oauth.admin_roles", "", "Comma list of roles mapped to admin."),
		v(oauth, KindString, "OAUTH_ROLES_SEPARATOR", "oauth.roles_separator", "", "Extra separator for role claims and lists."),
		v(oauth, KindBool, "ENABLE_OAUTH_GROUP_MANAGEMENT", "oauth.enable_group_mapping", "false", "Sync group memberships at login."),
		v(oauth, KindString, "OAUTH_GROUP_CLAIM", "oauth.oidc.group_claim", "groups", "Claim with group names (dot-nested).").alias("OAUTH_GROUPS_CLAIM"),
		v(oauth, KindBool, "ENABLE_OAUTH_GROUP_CREATION", "oauth.enable_group_creation", "false", "Create groups named in the claim."),
		v(oauth, KindEnum, "OAUTH_GROUP_DEFAULT_SHARE", "oauth.group_default_share", "true", "Share setting of groups created by OAuth.").oneOf("true", "members", "false"),

		// SPEC §8 limits: env only.
		v(lim, KindInt, "WEBSOCKET_EVENT_CALLER_TIMEOUT", "", "300", "Seconds __event_call__ waits for the client.").between(1, 0),
		v(lim, KindOptionalInt, "CHAT_STREAM_RESPONSE_CHUNK_MAX_BUFFER_SIZE", "", "", "Max streamed chunk bytes; empty or negative = no limit."),
		v(lim, KindInt, "SCHEDULER_POLL_INTERVAL", "", "10", "Scheduler tick in seconds.").between(1, 0).alias("AUTOMATION_POLL_INTERVAL"),
		v(lim, KindInt, "CALENDAR_ALERT_LOOKAHEAD_MINUTES", "", "10", "Default reminder window in minutes."),
		// Open WebUI's rag.file.max_size (COMPAT.md §8.2): stored, admins change it.
		v(lim, KindOptionalInt, "RAG_FILE_MAX_SIZE", "rag.file.max_size", "", "Largest file upload in MB; empty = unlimited."),

		// Model connections (COMPAT §6.1, §9.5).
		v(conn, KindBool, "ENABLE_FORWARD_USER_INFO_HEADERS", "", "false", "Send user/chat identity headers upstream."),
		v(conn, KindString, "FORWARD_SESSION_INFO_HEADER_CHAT_ID", "", "X-Service-Chat-Id", "Header name carrying the chat id."),
		v(conn, KindString, "FORWARD_SESSION_INFO_HEADER_MESSAGE_ID", "", "X-Service-Message-Id", "Header name carrying the message id (tool servers)."),
		v(conn, KindBool, "ENABLE_OLLAMA_API", "ollama.enable", "true", "Local model runtime connection."),
		v(conn, KindList, "OLLAMA_BASE_URLS", "ollama.base_urls", "http://localhost:11434", "Runtime base URLs, ';'-separated.").separatedBy(";").alias("OLLAMA_BASE_URL"),
		v(conn, KindJSON, "OLLAMA_API_CONFIGS", "ollama.api_configs", "{}", "Per-connection settings keyed by index (JSON object)."),
		v(conn, KindBool, "ENABLE_OPENAI_API", "openai.enable", "true", "OpenAI-compatible connections."),
		v(conn, KindList, "OPENAI_API_BASE_URLS", "openai.api_base_urls", "https://api.openai.com/v1", "Provider base URLs, ';'-separated.").separatedBy(";").alias("OPENAI_API_BASE_URL"),
		v(conn, KindList, "OPENAI_API_KEYS", "openai.api_keys", "", "Provider keys, ';'-separated, positional with the URLs.").separatedBy(";").alias("OPENAI_API_KEY").secret(),
		v(conn, KindJSON, "OPENAI_API_CONFIGS", "openai.api_configs", "{}", "Per-connection settings keyed by index (JSON object)."),

		// Background tasks (COMPAT §4.6).
		v(task, KindString, "TASK_MODEL", "task.model.default", "", "Task model for local chat models."),
		v(task, KindString, "TASK_MODEL_EXTERNAL", "task.model.external", "", "Task model for external chat models."),
		v(task, KindBool, "ENABLE_TITLE_GENERATION", "task.title.enable", "true", "Automatic chat titles."),
		v(task, KindBool, "ENABLE_TAGS_GENERATION", "task.tags.enable", "true", "Automatic chat tags."),
		v(task, KindBool, "ENABLE_FOLLOW_UP_GENERATION", "task.follow_up.enable", "true", "Suggested follow-up questions."),

		// Retrieval during chat (COMPAT §8.4, §8.8).
		v(rag, KindString, "RAG_TEMPLATE", "rag.template", "", "Prompt template for retrieved sources ({{CONTEXT}}, {{QUERY}}); empty = the built-in one."),
		v(rag, KindBool, "RAG_FULL_CONTEXT", "rag.full_context", "false", "Send whole documents instead of the top-k chunks."),
		v(rag, KindBool, "BYPASS_EMBEDDING_AND_RETRIEVAL", "rag.bypass_embedding_and_retrieval", "false", "Extract text only (no vectors); chats get whole documents."),
		v(rag, KindBool, "RAG_SYSTEM_CONTEXT", "", "false", "Put retrieved sources in the system message instead of the last user message."),
		v(rag, KindEnum, "RAG_EMBEDDING_ENGINE", "rag.embedding_engine", "", "Embedding engine: ollama or openai; empty = none in Hearth (whole documents are used).").oneOf("", "ollama", "openai"),
		v(rag, KindString, "RAG_EMBEDDING_MODEL", "rag.embedding_model", "sentence-transformers/all-MiniLM-L6-v2", "Embedding model name at the engine."),
		v(rag, KindInt, "RAG_EMBEDDING_BATCH_SIZE", "rag.embedding_batch_size", "1", "Texts per embedding request.").between(1, 0).alias("RAG_EMBEDDING_OPENAI_BATCH_SIZE"),
		v(rag, KindString, "RAG_OLLAMA_BASE_URL", "rag.ollama.url", "", "Ollama server for embeddings; empty = the first OLLAMA_BASE_URLS entry."),
		v(rag, KindString, "RAG_OLLAMA_API_KEY", "rag.ollama.key", "", "Key sent to RAG_OLLAMA_BASE_URL.").secret(),
		v(rag, KindString, "RAG_OPENAI_API_BASE_URL", "rag.openai.url", "", "OpenAI-compatible server for embeddings; empty = the first OPENAI_API_BASE_URLS entry."),
		v(rag, KindString, "RAG_OPENAI_API_KEY", "rag.openai.key", "", "Key for RAG_OPENAI_API_BASE_URL; empty = that connection's key.").secret(),
		v(rag, KindInt, "CHUNK_SIZE", "rag.chunk_size", "1000", "Characters per chunk.").between(1, 0),
		v(rag, KindInt, "CHUNK_OVERLAP", "rag.chunk_overlap", "100", "Characters shared by consecutive chunks.").between(0, 0),
		v(rag, KindBool, "ENABLE_MARKDOWN_HEADER_TEXT_SPLITTER", "rag.enable_markdown_header_text_splitter", "true", "Split on Markdown headers before chunking."),
		v(rag, KindInt, "RAG_TOP_K", "rag.top_k", "3", "Chunks retrieved per source.").between(1, 0),
		v(rag, KindInt, "RAG_CONTEXT_MAX_CHARS", "rag.context_max_chars", "100000", "Most characters of sources sent with one completion (Hearth); the rest is cut with a note.").between(1, 0),
		// Fetching user-supplied URLs (COMPAT.md §8.7): env-only, as in Open WebUI.
		v(rag, KindBool, "ENABLE_LOCAL_WEB_FETCH", "", "false", "Allow fetching private, loopback and link-local addresses (cloud metadata addresses stay blocked).").alias("ENABLE_RAG_LOCAL_WEB_FETCH"),
		v(rag, KindList, "WEB_FETCH_FILTER_LIST", "", "", "Comma-separated hosts, IPs or CIDRs: allowed, or blocked with a leading '!'; the metadata services are always blocked."),
		v(rag, KindBool, "AIOHTTP_CLIENT_ALLOW_REDIRECTS", "", "false", "Follow redirects when fetching user-supplied URLs (each target is checked again)."),
	}
}
