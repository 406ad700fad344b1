package server

// Temporary: replaced by the real rows.
func authzChatsRows() []authzRow { return nil }
