package server

// Temporary: replaced by the real rows.
func authzRealtimeRows() []authzRow { return nil }
