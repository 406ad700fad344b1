// Package realtime owns live connections to browsers (melody websockets at
// /ws): authentication of a connection, fan-out of events to every
// connection of a user, sequence numbers and catch-up for a running
// message, and the persistence of the short-named event types of SPEC.md §6.
// The frame format is documented here once the hub lands.
package realtime
