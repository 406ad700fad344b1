package server

// routeTable is the ONE route table of Hearth. Every route names its access
// level here, so authorization is reviewable in one place and the authz
// matrix test can prove every row. Most specific ServeMux patterns win, so
// "/api/v1/users/all" and "/api/v1/users/{user_id}" coexist.
func (s *Server) routeTable() []route {
	rows := []route{
		// Health and discovery (discovery.go).
		{pattern: "GET /health", access: public, h: s.handleHealth},
		{pattern: "GET /health/db", access: public, h: s.handleHealthDB},
		{pattern: "GET /ready", access: public, h: s.handleReady},
		{pattern: "GET /api/version", access: public, h: s.handleVersion},
		{pattern: "GET /api/config", access: public, h: s.handleAppConfig},
		{pattern: "GET /manifest.json", access: public, h: s.handleManifest},
		{pattern: "GET /docs", access: public, h: s.handleDocs},
		{pattern: "GET /openapi.json", access: public, h: s.handleOpenAPI},

		// Settings (settings.go).
		{pattern: "GET /api/v1/auths/admin/config", access: admin, h: s.handleGetAdminConfig},
		{pattern: "POST /api/v1/auths/admin/config", access: admin, h: s.handleSetAdminConfig},
		{pattern: "GET /api/v1/configs/banners", access: verified, h: s.handleGetBanners},
		{pattern: "POST /api/v1/configs/banners", access: admin, h: s.handleSetBanners},
		{pattern: "GET /api/v1/configs/export", access: admin, h: s.handleConfigExport},
		{pattern: "POST /api/v1/configs/import", access: admin, h: s.handleConfigImport},
		{pattern: "GET /api/v1/configs/settings", access: admin, h: s.handleListSettings},
		{pattern: "POST /api/v1/configs/settings", access: admin, h: s.handleUpdateSettings},

		// Accounts and credentials (auths.go, apikeys.go).
		{pattern: "GET /api/v1/auths/", access: anyRole, h: s.handleSessionUser},
		{pattern: "POST /api/v1/auths/signin", access: public, h: s.handleSignin},
		{pattern: "POST /api/v1/auths/signup", access: public, h: s.handleSignup},
		{pattern: "POST /api/v1/auths/signout", access: public, h: s.handleSignout},
		{pattern: "POST /api/v1/auths/ldap", access: public, h: s.handleLDAP},

		// OAuth / OIDC sign-in (oauth.go): public by nature; each step is
		// bound to the flow cookie and the provider's signed ID token.
		{pattern: "GET /oauth/{provider}/login", access: public, h: s.handleOAuthLogin},
		{pattern: "GET /oauth/{provider}/callback", access: public, h: s.handleOAuthCallback},
		{pattern: "GET /oauth/{provider}/login/callback", access: public, h: s.handleOAuthCallback},
		{pattern: "POST /api/v1/auths/add", access: admin, h: s.handleAddUser},
		{pattern: "POST /api/v1/auths/update/profile", access: verified, h: s.handleUpdateProfile},
		{pattern: "POST /api/v1/auths/update/timezone", access: verified, h: s.handleUpdateTimezone},
		{pattern: "POST /api/v1/auths/update/password", access: verified, h: s.handleUpdatePassword},
		{pattern: "GET /api/v1/auths/admin/details", access: anyRole, h: s.handleAdminDetails},
		{pattern: "GET /api/v1/auths/api_key", access: verified, h: s.handleGetLegacyKey},
		{pattern: "POST /api/v1/auths/api_key", access: verified, h: s.handleCreateLegacyKey},
		{pattern: "DELETE /api/v1/auths/api_key", access: verified, h: s.handleDeleteLegacyKey},
		{pattern: "GET /api/v1/auths/api_keys", access: verified, h: s.handleListKeys},
		{pattern: "POST /api/v1/auths/api_keys", access: verified, h: s.handleCreateKey},
		{pattern: "DELETE /api/v1/auths/api_keys/{id}", access: verified, h: s.handleDeleteKey},

		// Users (users.go).
		{pattern: "GET /api/v1/users/", access: admin, h: s.handleListUsers},
		{pattern: "GET /api/v1/users/all", access: admin, h: s.handleAllUsers},
		{pattern: "GET /api/v1/users/search", access: verified, h: s.handleSearchUsers},
		{pattern: "GET /api/v1/users/permissions", access: verified, h: s.handleMyPermissions},
		{pattern: "GET /api/v1/users/default/permissions", access: admin, h: s.handleGetDefaultPermissions},
		{pattern: "POST /api/v1/users/default/permissions", access: admin, h: s.handleSetDefaultPermissions},
		{pattern: "GET /api/v1/users/groups", access: verified, h: s.handleMyGroups},
		{pattern: "GET /api/v1/users/user/settings", access: verified, h: s.handleGetMySettings},
		{pattern: "POST /api/v1/users/user/settings/update", access: verified, h: s.handleUpdateMySettings},
		{pattern: "GET /api/v1/users/user/info", access: verified, h: s.handleGetMyInfo},
		{pattern: "POST /api/v1/users/user/info/update", access: verified, h: s.handleUpdateMyInfo},
		{pattern: "GET /api/v1/users/{user_id}", access: verified, h: s.handleGetUser},
		{pattern: "GET /api/v1/users/{user_id}/active", access: verified, h: s.handleUserActive},
		{pattern: "GET /api/v1/users/{user_id}/groups", access: admin, h: s.handleUserGroups},
		{pattern: "GET /api/v1/users/{user_id}/profile/image", access: verified, h: s.handleProfileImage},
		{pattern: "POST /api/v1/users/{user_id}/update", access: admin, h: s.handleUpdateUser},
		{pattern: "DELETE /api/v1/users/{user_id}", access: admin, h: s.handleDeleteUser},

		// Groups (groups.go).
		{pattern: "GET /api/v1/groups/", access: verified, h: s.handleListGroups},
		{pattern: "POST /api/v1/groups/create", access: admin, h: s.handleCreateGroup},
		{pattern: "GET /api/v1/groups/id/{id}", access: admin, h: s.handleGetGroup},
		{pattern: "POST /api/v1/groups/id/{id}/update", access: admin, h: s.handleUpdateGroup},
		{pattern: "POST /api/v1/groups/id/{id}/users", access: admin, h: s.handleGroupMembers},
		{pattern: "POST /api/v1/groups/id/{id}/users/add", access: admin, h: s.handleAddGroupMembers},
		{pattern: "POST /api/v1/groups/id/{id}/users/remove", access: admin, h: s.handleRemoveGroupMembers},
		{pattern: "DELETE /api/v1/groups/id/{id}/delete", access: admin, h: s.handleDeleteGroup},
		// Chats (chats.go). Literal segments come before {id} routes: where
		// patterns overlap the earlier row wins (see buildMux).
		{pattern: "POST /api/v1/chats/new", access: verified, h: s.handleCreateChat, body: chatBodyLimit},
		{pattern: "GET /api/v1/chats/", access: verified, h: s.handleListChats},
		{pattern: "GET /api/v1/chats/list", access: verified, h: s.handleListChats},
		{pattern: "GET /api/v1/chats/pinned", access: verified, h: s.handleListPinnedChats},
		{pattern: "GET /api/v1/chats/archived", access: verified, h: s.handleListArchivedChats},
		{pattern: "GET /api/v1/chats/archived/count", access: verified, h: s.handleCountArchivedChats},
		{pattern: "GET /api/v1/chats/shared", access: verified, h: s.handleListSharedChats},
		{pattern: "GET /api/v1/chats/search", access: verified, h: s.handleSearchChats},
		{pattern: "GET /api/v1/chats/all", access: verified, h: s.handleExportMyChats},
		{pattern: "GET /api/v1/chats/all/archived", access: verified, h: s.handleExportMyArchivedChats},
		{pattern: "GET /api/v1/chats/all/db", access: admin, h: s.handleExportAllChats},
		{pattern: "GET /api/v1/chats/list/user/{user_id}", access: admin, h: s.handleListUserChats},
		{pattern: "POST /api/v1/chats/import", access: verified, h: s.handleImportChats, body: importBodyLimit},
		{pattern: "DELETE /api/v1/chats/", access: verified, h: s.handleDeleteAllChats},
		{pattern: "POST /api/v1/chats/archive/all", access: verified, h: s.handleArchiveAllChats},
		{pattern: "POST /api/v1/chats/unarchive/all", access: verified, h: s.handleUnarchiveAllChats},
		{pattern: "DELETE /api/v1/chats/share/all", access: verified, h: s.handleDeleteAllShares},
		{pattern: "GET /api/v1/chats/share/{share_id}", access: verified, h: s.handleGetSharedChat},
		{pattern: "GET /api/v1/chats/folder/{folder_id}", access: verified, h: s.handleFolderChats},
		{pattern: "GET /api/v1/chats/folder/{folder_id}/list", access: verified, h: s.handleFolderChatList},
		{pattern: "GET /api/v1/chats/all/tags", access: verified, h: s.handleAllTags},
		{pattern: "POST /api/v1/chats/tags", access: verified, h: s.handleChatsByTag},
		{pattern: "GET /api/v1/chats/{id}", access: verified, h: s.handleGetChat},
		{pattern: "POST /api/v1/chats/{id}", access: verified, h: s.handleUpdateChat, body: chatBodyLimit},
		{pattern: "DELETE /api/v1/chats/{id}", access: verified, h: s.handleDeleteChat},
		{pattern: "POST /api/v1/chats/{id}/archive", access: verified, h: s.handleArchiveChat},
		{pattern: "POST /api/v1/chats/{id}/pin", access: verified, h: s.handlePinChat},
		{pattern: "GET /api/v1/chats/{id}/pinned", access: verified, h: s.handleChatPinned},
		{pattern: "POST /api/v1/chats/{id}/clone", access: verified, h: s.handleCloneChat},
		{pattern: "POST /api/v1/chats/{id}/clone/shared", access: verified, h: s.handleCloneSharedChat},
		{pattern: "POST /api/v1/chats/{id}/share", access: verified, h: s.handleShareChat},
		{pattern: "DELETE /api/v1/chats/{id}/share", access: verified, h: s.handleUnshareChat},
		{pattern: "POST /api/v1/chats/{id}/messages/{message_id}", access: verified, h: s.handleUpsertMessageContent, body: chatBodyLimit},
		{pattern: "DELETE /api/v1/chats/{id}/messages/{message_id}", access: verified, h: s.handleDeleteMessage},
		{pattern: "POST /api/v1/chats/{id}/folder", access: verified, h: s.handleMoveChatToFolder},
		{pattern: "GET /api/v1/chats/{id}/tags", access: verified, h: s.handleChatTags},
		{pattern: "POST /api/v1/chats/{id}/tags", access: verified, h: s.handleAddChatTag},
		{pattern: "DELETE /api/v1/chats/{id}/tags", access: verified, h: s.handleRemoveChatTag},

		// Folders (folders.go).
		{pattern: "GET /api/v1/folders/", access: verified, h: s.handleListFolders},
		{pattern: "POST /api/v1/folders/", access: verified, h: s.handleCreateFolder},
		{pattern: "GET /api/v1/folders/{id}", access: verified, h: s.handleGetFolder},
		{pattern: "POST /api/v1/folders/{id}/update", access: verified, h: s.handleUpdateFolder},
		{pattern: "POST /api/v1/folders/{id}/update/parent", access: verified, h: s.handleUpdateFolderParent},
		{pattern: "POST /api/v1/folders/{id}/update/expanded", access: verified, h: s.handleUpdateFolderExpanded},
		{pattern: "DELETE /api/v1/folders/{id}", access: verified, h: s.handleDeleteFolder},
		// Models and connections (models.go, connections.go).
		{pattern: "GET /api/models", access: verified, h: s.handleModels},
		{pattern: "GET /api/v1/models", access: verified, h: s.handleModels},
		{pattern: "GET /api/models/base", access: admin, h: s.handleBaseModels},
		{pattern: "GET /api/v1/models/model", access: verified, h: s.handleGetModelRecord},
		{pattern: "GET /api/v1/models/list", access: verified, h: s.handleListModelRecords},
		{pattern: "POST /api/v1/models/create", access: verified, h: s.handleCreateModelRecord},
		{pattern: "POST /api/v1/models/model/update", access: verified, h: s.handleUpdateModelRecord},
		{pattern: "POST /api/v1/models/model/toggle", access: verified, h: s.handleToggleModelRecord},
		{pattern: "POST /api/v1/models/model/delete", access: verified, h: s.handleDeleteModelRecord},
		{pattern: "POST /api/v1/models/model/access/update", access: verified, h: s.handleUpdateModelAccess},
		{pattern: "GET /api/v1/configs/models", access: admin, h: s.handleGetModelsConfig},
		{pattern: "POST /api/v1/configs/models", access: admin, h: s.handleSetModelsConfig},
		{pattern: "GET /ollama/config", access: admin, h: s.handleGetOllamaConfig},
		{pattern: "GET /runtime/config", access: admin, h: s.handleGetOllamaConfig},
		{pattern: "POST /ollama/config/update", access: admin, h: s.handleSetOllamaConfig},
		{pattern: "POST /runtime/config/update", access: admin, h: s.handleSetOllamaConfig},
		{pattern: "POST /ollama/verify", access: admin, h: s.handleVerifyOllama},
		{pattern: "POST /runtime/verify", access: admin, h: s.handleVerifyOllama},
		{pattern: "GET /openai/config", access: admin, h: s.handleGetOpenAIConfig},
		{pattern: "POST /openai/config/update", access: admin, h: s.handleSetOpenAIConfig},
		{pattern: "POST /openai/verify", access: admin, h: s.handleVerifyOpenAI},

		// Completions and tasks (completions.go, tasks.go).
		{pattern: "POST /api/chat/completions", access: verified, h: s.handleChatCompletions, body: chatBodyLimit},
		{pattern: "POST /api/v1/chat/completions", access: verified, h: s.handleChatCompletions, body: chatBodyLimit},
		{pattern: "POST /api/chat/completed", access: verified, h: s.handleChatCompleted, body: chatBodyLimit},
		{pattern: "GET /api/tasks", access: admin, h: s.handleListTasks},
		{pattern: "GET /api/tasks/chat/{chat_id}", access: verified, h: s.handleChatTasks},
		{pattern: "POST /api/tasks/chat/{chat_id}/stop", access: verified, h: s.handleStopChatTasks},
		{pattern: "POST /api/tasks/stop/{task_id}", access: admin, h: s.handleStopTask},
		{pattern: "GET /api/v1/tasks/config", access: admin, h: s.handleGetTaskConfig},
		{pattern: "POST /api/v1/tasks/config/update", access: admin, h: s.handleSetTaskConfig},

		// Live connection and events (ws.go, events.go). The websocket does
		// its own authentication in the handshake (a browser cannot set
		// headers on it).
		{pattern: "GET /ws", access: public, h: s.handleWS, body: -1},
		{pattern: "POST /api/v1/chats/{id}/messages/{message_id}/event", access: verified, h: s.handleChatEvent},
		// Messages format and embeddings (messages_api.go, embeddings.go).
		{pattern: "POST /api/message", access: verified, h: s.handleMessages, body: chatBodyLimit},
		{pattern: "POST /api/v1/messages", access: verified, h: s.handleMessages, body: chatBodyLimit},
		{pattern: "POST /api/embeddings", access: verified, h: s.handleEmbeddings, body: chatBodyLimit},
		{pattern: "POST /api/v1/embeddings", access: verified, h: s.handleEmbeddings, body: chatBodyLimit},

		// Files (files.go). The upload has no body limit here: the store
		// streams it and enforces RAG_FILE_MAX_SIZE piece by piece.
		{pattern: "POST /api/v1/files/", access: verified, h: s.handleUploadFile, body: -1},
		{pattern: "GET /api/v1/files/", access: verified, h: s.handleListFiles},
		{pattern: "DELETE /api/v1/files/all", access: admin, h: s.handleDeleteAllFiles},
		{pattern: "GET /api/v1/files/{id}", access: verified, h: s.handleGetFile},
		{pattern: "GET /api/v1/files/{id}/content", access: verified, h: s.handleGetFileContent},
		{pattern: "GET /api/v1/files/{id}/data/content", access: verified, h: s.handleGetFileDataContent},
		{pattern: "GET /api/v1/files/{id}/process/status", access: verified, h: s.handleFileStatus},
		{pattern: "DELETE /api/v1/files/{id}", access: verified, h: s.handleDeleteFile},

		// Web pages (web.go).
		{pattern: "POST /api/v1/retrieval/process/web", access: verified, h: s.handleProcessWeb},

		// Knowledge collections (knowledge.go).
		{pattern: "GET /api/v1/knowledge/", access: verified, h: s.handleListKnowledge},
		{pattern: "POST /api/v1/knowledge/create", access: verified, h: s.handleCreateKnowledge},
		{pattern: "GET /api/v1/knowledge/{id}", access: verified, h: s.handleGetKnowledge},
		{pattern: "POST /api/v1/knowledge/{id}/update", access: verified, h: s.handleUpdateKnowledge},
		{pattern: "POST /api/v1/knowledge/{id}/access/update", access: verified, h: s.handleUpdateKnowledgeAccess},
		{pattern: "POST /api/v1/knowledge/{id}/file/add", access: verified, h: s.handleAddKnowledgeFile},
		{pattern: "POST /api/v1/knowledge/{id}/file/remove", access: verified, h: s.handleRemoveKnowledgeFile},
		{pattern: "DELETE /api/v1/knowledge/{id}/delete", access: verified, h: s.handleDeleteKnowledge},
	}
	// SCIM 2.0 provisioning (scim.go); the router answers 401 while
	// SCIM_ENABLED is off (COMPAT.md decision 3).
	rows = append(rows, s.scimRoutes()...)
	// The runtime proxy (runtime.go) is served at /ollama and /runtime alike.
	for _, prefix := range []string{"/ollama", "/runtime"} {
		rows = append(rows, s.runtimeRoutes(prefix)...)
	}
	return rows
}

// scimRoutes are SPEC.md §4 "Provisioning (SCIM)" and the discovery
// documents of COMPAT.md §11.6, under scimBase.
func (s *Server) scimRoutes() []route {
	b := scimBase
	return []route{
		{pattern: "GET " + b + "/ServiceProviderConfig", access: scimOpen, h: s.handleSCIMServiceProviderConfig},
		{pattern: "GET " + b + "/ResourceTypes", access: scimOpen, h: s.handleSCIMResourceTypes},
		{pattern: "GET " + b + "/Schemas", access: scimOpen, h: s.handleSCIMSchemas},
		{pattern: "GET " + b + "/Users", access: scimToken, h: s.handleSCIMListUsers},
		{pattern: "POST " + b + "/Users", access: scimToken, h: s.handleSCIMCreateUser},
		{pattern: "GET " + b + "/Users/{id}", access: scimToken, h: s.handleSCIMGetUser},
		{pattern: "PUT " + b + "/Users/{id}", access: scimToken, h: s.handleSCIMReplaceUser},
		{pattern: "PATCH " + b + "/Users/{id}", access: scimToken, h: s.handleSCIMPatchUser},
		{pattern: "DELETE " + b + "/Users/{id}", access: scimToken, h: s.handleSCIMDeleteUser},
		{pattern: "GET " + b + "/Groups", access: scimToken, h: s.handleSCIMListGroups},
		{pattern: "POST " + b + "/Groups", access: scimToken, h: s.handleSCIMCreateGroup},
		{pattern: "GET " + b + "/Groups/{id}", access: scimToken, h: s.handleSCIMGetGroup},
		{pattern: "PUT " + b + "/Groups/{id}", access: scimToken, h: s.handleSCIMReplaceGroup},
		{pattern: "PATCH " + b + "/Groups/{id}", access: scimToken, h: s.handleSCIMPatchGroup},
		{pattern: "DELETE " + b + "/Groups/{id}", access: scimToken, h: s.handleSCIMDeleteGroup},
	}
}

// runtimeRoutes are the Ollama pass-through routes of COMPAT.md §6.3 under
// one prefix; most take an optional /{url_idx} that names a backend.
func (s *Server) runtimeRoutes(p string) []route {
	rows := []route{
		{pattern: "GET " + p + "/", access: public, h: s.handleRuntimeRoot},
		{pattern: "GET " + p + "/api/ps", access: admin, h: s.handleRuntimePS},
		{pattern: "POST " + p + "/api/show", access: verified, h: s.handleRuntimeShow},
		{pattern: "POST " + p + "/api/unload", access: admin, h: s.handleRuntimeUnload},
	}
	withIdx := []route{
		{pattern: "GET " + p + "/api/version", access: public, h: s.handleRuntimeVersion},
		{pattern: "GET " + p + "/api/tags", access: verified, h: s.handleRuntimeTags},
		{pattern: "POST " + p + "/api/generate", access: verified, h: s.handleRuntimeGenerate, body: chatBodyLimit},
		{pattern: "POST " + p + "/api/chat", access: verified, h: s.handleRuntimeChat, body: chatBodyLimit},
		{pattern: "POST " + p + "/api/embed", access: verified, h: s.handleRuntimeEmbed, body: chatBodyLimit},
		{pattern: "POST " + p + "/api/embeddings", access: verified, h: s.handleRuntimeEmbeddings, body: chatBodyLimit},
		{pattern: "POST " + p + "/v1/chat/completions", access: verified, h: s.handleRuntimeV1, body: chatBodyLimit},
		{pattern: "POST " + p + "/v1/completions", access: verified, h: s.handleRuntimeV1, body: chatBodyLimit},
		{pattern: "POST " + p + "/v1/messages", access: verified, h: s.handleRuntimeV1, body: chatBodyLimit},
		{pattern: "POST " + p + "/v1/responses", access: verified, h: s.handleRuntimeResponses, body: chatBodyLimit},
		{pattern: "GET " + p + "/v1/models", access: verified, h: s.handleRuntimeV1Models},
		{pattern: "POST " + p + "/api/pull", access: admin, h: s.handleRuntimeManage, body: -1},
		{pattern: "POST " + p + "/api/push", access: admin, h: s.handleRuntimeManage},
		{pattern: "POST " + p + "/api/create", access: admin, h: s.handleRuntimeManage, body: -1},
		{pattern: "POST " + p + "/api/copy", access: admin, h: s.handleRuntimeManage},
		{pattern: "DELETE " + p + "/api/delete", access: admin, h: s.handleRuntimeManage},
	}
	for _, rt := range withIdx {
		rows = append(rows, rt)
		rt.pattern += "/{url_idx}"
		rows = append(rows, rt)
	}
	return rows
}

// Body limits of the chat routes: a chat update carries whole messages (a
// pasted document can be large); an import carries many chats. Larger
// bodies get 413 before anything is written.
const (
	chatBodyLimit   = 32 << 20
	importBodyLimit = 128 << 20
)
