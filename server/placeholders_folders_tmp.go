package server

import "net/http"

// Temporary placeholders until the real handlers land; delete this file then.
func (s *Server) handleFolderChatList(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleChatTags(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleAddChatTag(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleRemoveChatTag(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleAllTags(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleChatsByTag(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleListFolders(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleCreateFolder(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleGetFolder(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleUpdateFolder(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleUpdateFolderParent(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleUpdateFolderExpanded(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleDeleteFolder(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
