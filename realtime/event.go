package realtime

// Event is one live event for a user's browser connections: Open WebUI's
// `events` payload {chat_id, message_id, data: {type, data}} (COMPAT.md
// §9.1). Routing fields are set by the service, not by plugins.
type Event struct {
	ChatID    string `json:"chat_id"`
	MessageID string `json:"message_id"`
	Data      Data   `json:"data"`
}

// Data is the event envelope {type, data} of SPEC.md §6.
type Data struct {
	Type string `json:"type"`
	Data any    `json:"data"`
}
