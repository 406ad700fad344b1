package config

import (
	"errors"
	"time"
)

// Config is one immutable snapshot of every variable. Each field carries the env name of
// its variable in the `env` tag; the definition table (vars.go) holds type, default, key
// and persistence. Maps and slices in a published Config are shared between readers and
// must never be modified (copy them first; Permissions has Clone).
type Config struct {
	// Server / process (env only).
	Port                        int    `env:"PORT"`
	Host                        string `env:"HOST"`
	DataDir                     string `env:"DATA_DIR"`
	Env                         string `env:"ENV"` // "dev" or "prod"
	DatabaseURL                 string `env:"DATABASE_URL"`
	RedisURL                    string `env:"REDIS_URL"`
	ThreadPoolSize              int    `env:"THREAD_POOL_SIZE"`
	BuildHash                   string `env:"WEBUI_BUILD_HASH"`
	LicenseKey                  string `env:"LICENSE_KEY"`
	DeploymentID                string `env:"DEPLOYMENT_ID"`
	ReleaseChannel              string `env:"RELEASE_CHANNEL"` // "stable" or "dev"
	EnablePersistentConfig      bool   `env:"ENABLE_PERSISTENT_CONFIG"`
	EnableOAuthPersistentConfig bool   `env:"ENABLE_OAUTH_PERSISTENT_CONFIG"`

	// General (SPEC §1).
	WebUIURL                                   string         `env:"WEBUI_URL"`
	WebUIName                                  string         `env:"WEBUI_NAME"`
	EnableSignup                               bool           `env:"ENABLE_SIGNUP"`
	EnableSignupPasswordConfirmation           bool           `env:"ENABLE_SIGNUP_PASSWORD_CONFIRMATION"`
	AdminBootstrapEmail                        string         `env:"WEBUI_ADMIN_EMAIL"`
	AdminBootstrapPassword                     string         `env:"WEBUI_ADMIN_PASSWORD"`
	AdminBootstrapName                         string         `env:"WEBUI_ADMIN_NAME"`
	EnableLoginForm                            bool           `env:"ENABLE_LOGIN_FORM"`
	EnablePasswordChangeForm                   bool           `env:"ENABLE_PASSWORD_CHANGE_FORM"`
	EnablePasswordAuth                         bool           `env:"ENABLE_PASSWORD_AUTH"`
	DefaultLocale                              string         `env:"DEFAULT_LOCALE"`
	DefaultModels                              string         `env:"DEFAULT_MODELS"`
	DefaultPinnedModels                        string         `env:"DEFAULT_PINNED_MODELS"`
	DefaultModelMetadata                       map[string]any `env:"DEFAULT_MODEL_METADATA"`
	DefaultModelParams                         map[string]any `env:"DEFAULT_MODEL_PARAMS"`
	DefaultUserRole                            string         `env:"DEFAULT_USER_ROLE"` // pending, user, admin
	DefaultGroupID                             string         `env:"DEFAULT_GROUP_ID"`
	DefaultGroupSharePermission                string         `env:"DEFAULT_GROUP_SHARE_PERMISSION"` // members, true, false
	PendingUserOverlayTitle                    string         `env:"PENDING_USER_OVERLAY_TITLE"`
	PendingUserOverlayContent                  string         `env:"PENDING_USER_OVERLAY_CONTENT"`
	EnableCalendar                             bool           `env:"ENABLE_CALENDAR"`
	EnableChannels                             bool           `env:"ENABLE_CHANNELS"`
	EnableFolders                              bool           `env:"ENABLE_FOLDERS"`
	EnableNotes                                bool           `env:"ENABLE_NOTES"`
	EnableMemories                             bool           `env:"ENABLE_MEMORIES"`
	EnableMemorySystemContext                  bool           `env:"ENABLE_MEMORY_SYSTEM_CONTEXT"`
	EnableAutomations                          bool           `env:"ENABLE_AUTOMATIONS"`
	EnableUserWebhooks                         bool           `env:"ENABLE_USER_WEBHOOKS"`
	WebhookURL                                 string         `env:"WEBHOOK_URL"`
	EnableAdminExport                          bool           `env:"ENABLE_ADMIN_EXPORT"`
	EnableAdminChatAccess                      bool           `env:"ENABLE_ADMIN_CHAT_ACCESS"`
	EnableAdminAnalytics                       bool           `env:"ENABLE_ADMIN_ANALYTICS"`
	BypassAdminAccessControl                   bool           `env:"BYPASS_ADMIN_ACCESS_CONTROL"`
	BypassModelAccessControl                   bool           `env:"BYPASS_MODEL_ACCESS_CONTROL"`
	EnableCustomModelFallback                  bool           `env:"ENABLE_CUSTOM_MODEL_FALLBACK"`
	ShowAdminDetails                           bool           `env:"SHOW_ADMIN_DETAILS"`
	AdminEmail                                 string         `env:"ADMIN_EMAIL"`
	EnablePublicActiveUsersCount               bool           `env:"ENABLE_PUBLIC_ACTIVE_USERS_COUNT"`
	EnableUserStatus                           bool           `env:"ENABLE_USER_STATUS"`
	EnableCommunitySharing                     bool           `env:"ENABLE_COMMUNITY_SHARING"`
	EnableMessageRating                        bool           `env:"ENABLE_MESSAGE_RATING"`
	EnableEasterEggs                           bool           `env:"ENABLE_EASTER_EGGS"`
	ResponseWatermark                          string         `env:"RESPONSE_WATERMARK"`
	IframeCSP                                  string         `env:"IFRAME_CSP"`
	EnableRealtimeChatSave                     bool           `env:"ENABLE_REALTIME_CHAT_SAVE"`
	EnableChatResponseBase64ImageURLConversion bool           `env:"ENABLE_CHAT_RESPONSE_BASE64_IMAGE_URL_CONVERSION"`
	EnableImageContentTypeExtensionFallback    bool           `env:"ENABLE_IMAGE_CONTENT_TYPE_EXTENSION_FALLBACK"`
	EnableProfileImageURLForwarding            bool           `env:"ENABLE_PROFILE_IMAGE_URL_FORWARDING"`
	ProfileImageAllowedMimeTypes               []string       `env:"PROFILE_IMAGE_ALLOWED_MIME_TYPES"`
	ChatResponseStreamDeltaChunkSize           int            `env:"CHAT_RESPONSE_STREAM_DELTA_CHUNK_SIZE"`
	EnableResponsesAPIStateful                 bool           `env:"ENABLE_RESPONSES_API_STATEFUL"`
	Banners                                    []Banner       `env:"WEBUI_BANNERS"`
	ExternalPWAManifestURL                     string         `env:"EXTERNAL_PWA_MANIFEST_URL"`
	FolderMaxFileCount                         OptionalInt    `env:"FOLDER_MAX_FILE_COUNT"`
	AutomationMaxCount                         OptionalInt    `env:"AUTOMATION_MAX_COUNT"`
	AutomationMinInterval                      OptionalInt    `env:"AUTOMATION_MIN_INTERVAL"` // seconds

	// Authentication and API keys.
	WebUIAuth                         bool   `env:"WEBUI_AUTH"`
	WebUISecretKey                    string `env:"WEBUI_SECRET_KEY"`
	JWTExpiresIn                      string `env:"JWT_EXPIRES_IN"` // see JWTExpiry
	EnableAPIKeys                     bool   `env:"ENABLE_API_KEYS"`
	EnableAPIKeysEndpointRestrictions bool   `env:"ENABLE_API_KEYS_ENDPOINT_RESTRICTIONS"`
	APIKeysAllowedEndpoints           string `env:"API_KEYS_ALLOWED_ENDPOINTS"` // comma-separated path prefixes
	CustomAPIKeyHeader                string `env:"CUSTOM_API_KEY_HEADER"`
	AuthCookieSameSite                string `env:"WEBUI_AUTH_COOKIE_SAME_SITE"` // lax, strict, none
	AuthCookieSecure                  bool   `env:"WEBUI_AUTH_COOKIE_SECURE"`
	EnableLDAP                        bool   `env:"ENABLE_LDAP"`
	EnableInitialAdminSignup          bool   `env:"ENABLE_INITIAL_ADMIN_SIGNUP"`
	EnablePasswordValidation          bool   `env:"ENABLE_PASSWORD_VALIDATION"`
	PasswordValidationRegexPattern    string `env:"PASSWORD_VALIDATION_REGEX_PATTERN"` // "" = built-in rule
	PasswordValidationHint            string `env:"PASSWORD_VALIDATION_HINT"`
	AuthSignoutRedirectURL            string `env:"WEBUI_AUTH_SIGNOUT_REDIRECT_URL"`

	// Default user permissions (COMPAT §14.3).
	UserPermissions Permissions `env:"USER_PERMISSIONS"`

	// Trusted header sign-in.
	TrustedEmailHeader  string `env:"WEBUI_AUTH_TRUSTED_EMAIL_HEADER"`
	TrustedNameHeader   string `env:"WEBUI_AUTH_TRUSTED_NAME_HEADER"`
	TrustedGroupsHeader string `env:"WEBUI_AUTH_TRUSTED_GROUPS_HEADER"`
	TrustedRoleHeader   string `env:"WEBUI_AUTH_TRUSTED_ROLE_HEADER"`

	// SCIM.
	SCIMEnabled      bool   `env:"SCIM_ENABLED"`
	SCIMToken        string `env:"SCIM_TOKEN"`
	SCIMAuthProvider string `env:"SCIM_AUTH_PROVIDER"`

	// OAuth / OIDC.
	EnableOAuthSignup              bool   `env:"ENABLE_OAUTH_SIGNUP"`
	OAuthMergeAccountsByEmail      bool   `env:"OAUTH_MERGE_ACCOUNTS_BY_EMAIL"`
	OAuthUpdatePictureOnLogin      bool   `env:"OAUTH_UPDATE_PICTURE_ON_LOGIN"`
	OAuthPictureClaim              string `env:"OAUTH_PICTURE_CLAIM"`
	OAuthSessionTokenEncryptionKey string `env:"OAUTH_SESSION_TOKEN_ENCRYPTION_KEY"`
	OAuthClientInfoEncryptionKey   string `env:"OAUTH_CLIENT_INFO_ENCRYPTION_KEY"`
	EnableOAuthIDTokenCookie       bool   `env:"ENABLE_OAUTH_ID_TOKEN_COOKIE"`
	EnableOAuthTokenExchange       bool   `env:"ENABLE_OAUTH_TOKEN_EXCHANGE"`
	EnableOAuthBackchannelLogout   bool   `env:"ENABLE_OAUTH_BACKCHANNEL_LOGOUT"`
	OAuthMaxSessionsPerUser        int    `env:"OAUTH_MAX_SESSIONS_PER_USER"`
	OAuthClientID                  string `env:"OAUTH_CLIENT_ID"`
	OAuthClientSecret              string `env:"OAUTH_CLIENT_SECRET"`
	OpenIDProviderURL              string `env:"OPENID_PROVIDER_URL"`
	OpenIDRedirectURI              string `env:"OPENID_REDIRECT_URI"`
	OAuthProviderName              string `env:"OAUTH_PROVIDER_NAME"`
	OAuthScopes                    string `env:"OAUTH_SCOPES"`
	OAuthAudience                  string `env:"OAUTH_AUDIENCE"`
	EnableOAuthRoleManagement      bool   `env:"ENABLE_OAUTH_ROLE_MANAGEMENT"`
	OAuthRolesClaim                string `env:"OAUTH_ROLES_CLAIM"`
	OAuthAllowedRoles              string `env:"OAUTH_ALLOWED_ROLES"` // comma list (+ OAUTH_ROLES_SEPARATOR)
	OAuthAdminRoles                string `env:"OAUTH_ADMIN_ROLES"`   // comma list (+ OAUTH_ROLES_SEPARATOR)
	OAuthRolesSeparator            string `env:"OAUTH_ROLES_SEPARATOR"`
	EnableOAuthGroupManagement     bool   `env:"ENABLE_OAUTH_GROUP_MANAGEMENT"`
	OAuthGroupClaim                string `env:"OAUTH_GROUP_CLAIM"`
	EnableOAuthGroupCreation       bool   `env:"ENABLE_OAUTH_GROUP_CREATION"`
	OAuthGroupDefaultShare         string `env:"OAUTH_GROUP_DEFAULT_SHARE"` // true, members, false

	// Limits (SPEC §8).
	WebsocketEventCallerTimeout          int         `env:"WEBSOCKET_EVENT_CALLER_TIMEOUT"` // seconds
	ChatStreamResponseChunkMaxBufferSize OptionalInt `env:"CHAT_STREAM_RESPONSE_CHUNK_MAX_BUFFER_SIZE"`
	SchedulerPollInterval                int         `env:"SCHEDULER_POLL_INTERVAL"` // seconds
	CalendarAlertLookaheadMinutes        int         `env:"CALENDAR_ALERT_LOOKAHEAD_MINUTES"`
	RAGFileMaxSize                       OptionalInt `env:"RAG_FILE_MAX_SIZE"` // MB

	// Model connections.
	EnableForwardUserInfoHeaders      bool           `env:"ENABLE_FORWARD_USER_INFO_HEADERS"`
	ForwardSessionInfoHeaderChatID    string         `env:"FORWARD_SESSION_INFO_HEADER_CHAT_ID"`
	ForwardSessionInfoHeaderMessageID string         `env:"FORWARD_SESSION_INFO_HEADER_MESSAGE_ID"`
	EnableOllamaAPI                   bool           `env:"ENABLE_OLLAMA_API"`
	OllamaBaseURLs                    []string       `env:"OLLAMA_BASE_URLS"`
	OllamaAPIConfigs                  map[string]any `env:"OLLAMA_API_CONFIGS"`
	EnableOpenAIAPI                   bool           `env:"ENABLE_OPENAI_API"`
	OpenAIAPIBaseURLs                 []string       `env:"OPENAI_API_BASE_URLS"`
	OpenAIAPIKeys                     []string       `env:"OPENAI_API_KEYS"` // positional with OpenAIAPIBaseURLs
	OpenAIAPIConfigs                  map[string]any `env:"OPENAI_API_CONFIGS"`

	// Background tasks.
	TaskModel                string `env:"TASK_MODEL"`
	TaskModelExternal        string `env:"TASK_MODEL_EXTERNAL"`
	EnableTitleGeneration    bool   `env:"ENABLE_TITLE_GENERATION"`
	EnableTagsGeneration     bool   `env:"ENABLE_TAGS_GENERATION"`
	EnableFollowUpGeneration bool   `env:"ENABLE_FOLLOW_UP_GENERATION"`

	// Retrieval during chat.
	RAGTemplate                 string `env:"RAG_TEMPLATE"`
	RAGFullContext              bool   `env:"RAG_FULL_CONTEXT"`
	BypassEmbeddingAndRetrieval bool   `env:"BYPASS_EMBEDDING_AND_RETRIEVAL"`
	RAGSystemContext            bool   `env:"RAG_SYSTEM_CONTEXT"`
	RAGContextMaxChars          int    `env:"RAG_CONTEXT_MAX_CHARS"`
	RAGEmbeddingEngine          string `env:"RAG_EMBEDDING_ENGINE"`
	RAGEmbeddingModel           string `env:"RAG_EMBEDDING_MODEL"`
	RAGEmbeddingBatchSize       int    `env:"RAG_EMBEDDING_BATCH_SIZE"`
	RAGOllamaBaseURL            string `env:"RAG_OLLAMA_BASE_URL"`
	RAGOllamaAPIKey             string `env:"RAG_OLLAMA_API_KEY"`
	RAGOpenAIAPIBaseURL         string `env:"RAG_OPENAI_API_BASE_URL"`
	RAGOpenAIAPIKey             string `env:"RAG_OPENAI_API_KEY"`
	ChunkSize                   int    `env:"CHUNK_SIZE"`
	ChunkOverlap                int    `env:"CHUNK_OVERLAP"`
	EnableMarkdownHeaderSplit   bool   `env:"ENABLE_MARKDOWN_HEADER_TEXT_SPLITTER"`
	RAGTopK                     int    `env:"RAG_TOP_K"`

	// Fetching user-supplied URLs (netguard).
	EnableLocalWebFetch         bool     `env:"ENABLE_LOCAL_WEB_FETCH"`
	WebFetchFilterList          []string `env:"WEB_FETCH_FILTER_LIST"`
	AIOHTTPClientAllowRedirects bool     `env:"AIOHTTP_CLIENT_ALLOW_REDIRECTS"`
}

// JWTExpiry returns the token lifetime from JWTExpiresIn; noExpiry means issue tokens
// without an exp claim ("-1", "0"). The value was validated when it was loaded or set.
func (c *Config) JWTExpiry() (d time.Duration, noExpiry bool) {
	d, noExpiry, err := ParseDuration(c.JWTExpiresIn)
	if err != nil { // unreachable for a Config built by this package
		return 4 * 7 * 24 * time.Hour, false
	}
	return d, noExpiry
}

// Validate reports combinations the server must refuse to start with (COMPAT decision
// table row 1). It is separate from Load so `config explain` can still show a bad setup.
func (c *Config) Validate() error {
	if !c.EnablePasswordAuth && !c.EnableOAuthSignup {
		return errors.New("ENABLE_PASSWORD_AUTH=false requires ENABLE_OAUTH_SIGNUP=true; otherwise nobody could sign in with a new account")
	}
	return nil
}
