package ui

import (
	"embed"
	"io/fs"
)

// dist holds the built web client (npm run build in ui/web). all: keeps
// files whose names start with . or _ (Vite may emit such chunks).
//
//go:embed all:dist
var dist embed.FS

// FS returns the built web client with index.html at its root, as
// server.Deps.UI expects.
func FS() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // "dist" is a valid path: cannot happen
	}
	return sub
}
