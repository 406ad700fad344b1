package server

import "net/http"

// Temporary placeholders until the real handlers land; delete this file then.
func (s *Server) handleCreateChat(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleListChats(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleListPinnedChats(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleListArchivedChats(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleCountArchivedChats(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleListSharedChats(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleSearchChats(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleExportMyChats(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleExportMyArchivedChats(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleExportAllChats(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleListUserChats(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleImportChats(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleDeleteAllChats(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleArchiveAllChats(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleUnarchiveAllChats(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleDeleteAllShares(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleGetSharedChat(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleGetChat(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleUpdateChat(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleDeleteChat(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleArchiveChat(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handlePinChat(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleChatPinned(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleCloneChat(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleCloneSharedChat(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleShareChat(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleUnshareChat(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleUpsertMessageContent(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleDeleteMessage(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleMoveChatToFolder(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleFolderChats(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
