package server

// Temporary: replaced by the real rows.
func authzPipelineRows() []authzRow { return nil }
