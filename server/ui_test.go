package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestWebUIIsServed: the UI's page answers at its own paths, its modules
// as JavaScript (a browser runs no module of another type), under a
// policy that runs only the server's own files; the API keeps its 404s.
func TestWebUIIsServed(t *testing.T) {
	s := &server{}
	h := s.routes()
	get := func(path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec
	}
	for _, p := range []string{"/", "/login", "/applications", "/applications/argocd/web"} {
		rec := get(p)
		assert.Equal(t, http.StatusOK, rec.Code, p)
		assert.Contains(t, rec.Body.String(), `<script type="module" src="/assets/js/main.js">`, p)
		assert.Contains(t, rec.Header().Get("Content-Security-Policy"), "default-src 'self'", p)
	}
	page := get("/applications").Body.String()
	assert.Contains(t, page, `<link rel="modulepreload" href="/assets/js/apps.js">`, "every module is fetched at once")
	assert.Contains(t, page, `<link rel="modulepreload" href="/assets/vendor/preact.mjs">`)
	assert.Contains(t, page, `<link rel="preload" as="fetch" crossorigin href="/api/v1/applications">`, "the list loads beside the modules")
	page = get("/applications/argocd/web").Body.String()
	assert.Contains(t, page, `href="/api/v1/applications/web?appNamespace=argocd"`)
	assert.Contains(t, page, `href="/api/v1/applications/web/resource-tree?appNamespace=argocd"`)
	assert.NotContains(t, get(`/applications/argocd/we%22b`).Body.String(), `rel="preload"`, "only a DNS label is written into the page")
	for _, p := range []string{"/assets/js/main.js", "/assets/vendor/preact.mjs", "/assets/vendor/hooks.mjs"} {
		rec := get(p)
		assert.Equal(t, http.StatusOK, rec.Code, p)
		assert.True(t, strings.HasPrefix(rec.Header().Get("Content-Type"), "text/javascript"), "%s: %s", p, rec.Header().Get("Content-Type"))
	}
	assert.Equal(t, http.StatusNotFound, get("/assets/nothing.js").Code)
	assert.Equal(t, http.StatusNotFound, get("/elsewhere").Code)
	api := get("/api/v1/nothing")
	assert.Equal(t, http.StatusNotFound, api.Code)
	assert.Contains(t, api.Body.String(), "is not an API of ferry-server")
}
