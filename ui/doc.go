// Package ui embeds Hearth's own web client (issue 6): a Svelte 5 +
// TypeScript single-page app whose source is in ui/web/ and whose built
// files are in ui/dist/. The built files are committed, so `go build` and
// `go run . serve` need no Node.js; CI rebuilds them (cd ui/web && npm ci &&
// npm run build) and fails when the committed copy is stale.
//
// FS returns the files with index.html at the root; the server serves them
// at / (server/ui.go: index.html for extension-less client routes, hashed
// files under assets/ cached as immutable). ui is a leaf package: it imports
// nothing of Hearth.
package ui
