package main

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"regexp"
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
	// index is index.html with a modulepreload link to each module
	// before its </head>: the browser fetches them all at once, not one
	// import after another.
	index []byte
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
	var links strings.Builder
	for _, dir := range []string{"js", "vendor"} {
		entries, _ := fs.ReadDir(sub, dir)
		for _, e := range entries {
			if n := e.Name(); strings.HasSuffix(n, ".js") || strings.HasSuffix(n, ".mjs") {
				fmt.Fprintf(&links, "<link rel=\"modulepreload\" href=\"/assets/%s/%s\">\n", dir, n)
			}
		}
	}
	index, _ := fs.ReadFile(sub, "index.html")
	u.index = []byte(strings.Replace(string(index), "</head>", links.String()+"</head>", 1))
	return u
}

// dnsLabel is what an app's name and namespace are: a DNS label.
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// page is the UI's page for path: index.html, with a preload of the API
// answers the page asks for first (the list of apps; an app and its
// tree), so that they load while the modules and the session check do.
// Each preload's URL is the one the page's fetch asks (api.js appPath).
func (u *webUI) page(path string) []byte {
	var data []string
	switch parts := strings.Split(strings.Trim(path, "/"), "/"); {
	case path == "/applications":
		data = []string{"/api/v1/applications"}
	case len(parts) == 3 && parts[0] == "applications" && dnsLabel.MatchString(parts[1]) && dnsLabel.MatchString(parts[2]):
		app := "/api/v1/applications/" + parts[2]
		q := "?appNamespace=" + parts[1]
		data = []string{app + q, app + "/resource-tree" + q}
	}
	if len(data) == 0 {
		return u.index
	}
	var links strings.Builder
	for _, d := range data {
		fmt.Fprintf(&links, "<link rel=\"preload\" as=\"fetch\" crossorigin href=\"%s\">\n", d)
	}
	return []byte(strings.Replace(string(u.index), "</head>", links.String()+"</head>", 1))
}

// serve answers an asset, or the page for a path of the UI's own.
func (u *webUI) serve(w http.ResponseWriter, r *http.Request) {
	name, isAsset := strings.CutPrefix(r.URL.Path, "/assets/")
	name = path.Clean(name)
	etag, ok := u.etags[name]
	if isAsset && !ok {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	// Only this server's own files run in the page.
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-cache") // an asset is revalidated with its ETag: a new binary's files are seen at once
	if !isAsset {
		h.Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(u.page(r.URL.Path))
		return
	}
	h.Set("ETag", etag)
	http.ServeFileFS(w, r, u.files, name)
}
