// Package archtest holds no code, only a test: it runs `go list` over the
// module and fails on an import edge that ARCHITECTURE.md forbids (nothing
// imports server or main except cli; the leaves import nothing internal;
// every package imports only what its row of the table allows) and on a
// package without a doc.go. A new package must be added to the table here
// and in ARCHITECTURE.md.
package archtest
