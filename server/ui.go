package main

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

// The web UI: static files embedded in the binary (server/ui), served at
// /assets/, and its one page, index.html, at every path of the UI's own
// (/, /login, /applications/…, routes.go). It is a client of the REST API
// alone, so whatever it shows a script can get. See
// docs/operator-manual/web-ui.md.

//go:embed ui
var uiFiles embed.FS

type webUI struct {
	files fs.FS
	etags map[string]string
}

func newWebUI() *webUI {
	sub, err := fs.Sub(uiFiles, "ui")
	if err != nil {
		panic(err) // the embedded tree always has ui/
	}
	u := &webUI{files: sub, etags: map[string]string{}}
	_ = fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, err := fs.ReadFile(sub, p); err == nil {
				sum := sha256.Sum256(b)
				u.etags[p] = `"` + hex.EncodeToString(sum[:8]) + `"`
			}
		}
		return nil
	})
	return u
}

// serve answers an asset, or the page for a path of the UI's own.
func (u *webUI) serve(w http.ResponseWriter, r *http.Request) {
	name, isAsset := strings.CutPrefix(r.URL.Path, "/assets/")
	if !isAsset {
		name = "index.html"
	}
	name = path.Clean(name)
	etag, ok := u.etags[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	// Only this server's own files run in the page.
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("ETag", etag)
	h.Set("Cache-Control", "no-cache") // revalidated with the ETag: a new binary's files are seen at once
	http.ServeFileFS(w, r, u.files, name)
}
