package server

import (
	"context"
	"net/http"

	"hearth/chat"
)

// Temporary placeholders until the real code lands; delete this file then.
func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleBaseModels(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleGetModelRecord(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleListModelRecords(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleCreateModelRecord(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleUpdateModelRecord(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleToggleModelRecord(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleDeleteModelRecord(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleUpdateModelAccess(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleGetModelsConfig(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleSetModelsConfig(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleGetOllamaConfig(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleSetOllamaConfig(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleVerifyOllama(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleGetOpenAIConfig(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleSetOpenAIConfig(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleVerifyOpenAI(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}

// modelsState is the model registry's state on Server (models.go).
type modelsState struct{}

func (s *Server) initModels(ctx context.Context, d Deps) error { return nil }

// resolver is the model resolver the pipeline uses.
func (s *Server) resolver() chat.Resolver { return nil }
