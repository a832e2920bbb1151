package main

import (
	"net/http"
	"runtime"
	"runtime/debug"
	"strings"
)

// routes is the server's API: Argo CD's REST paths that scripts use
// (docs/user-guide/api.md lists them and those not offered).
func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/version", s.version)
	mux.HandleFunc("GET /api/v1/settings", s.settings)
	mux.HandleFunc("POST /api/v1/session", s.sessionCreate)
	mux.HandleFunc("DELETE /api/v1/session", s.sessionDelete)
	mux.HandleFunc("GET /api/v1/session/userinfo", s.userInfo)
	mux.HandleFunc("PUT /api/v1/account/password", s.accountPassword)
	mux.HandleFunc("POST /api/v1/account/{name}/token", s.accountToken)
	mux.HandleFunc("GET /api/v1/account/can-i/{resource}/{action}/{object...}", s.canI)

	mux.HandleFunc("GET /auth/login", s.ssoLogin)
	mux.HandleFunc("GET /auth/callback", s.ssoCallback)

	mux.HandleFunc("GET /api/v1/applications", s.appList)
	mux.HandleFunc("GET /api/v1/stream/applications", s.appStream)
	mux.HandleFunc("GET /api/v1/applications/{name}", s.changes(s.appGet))
	mux.HandleFunc("PUT /api/v1/applications/{name}", s.changes(s.appUpdate))
	mux.HandleFunc("DELETE /api/v1/applications/{name}", s.changes(s.appDelete))
	mux.HandleFunc("GET /api/v1/applications/{name}/events", s.appEvents)
	mux.HandleFunc("POST /api/v1/applications/{name}/sync", s.changes(s.appSync))
	mux.HandleFunc("POST /api/v1/applications/{name}/rollback", s.changes(s.appRollback))
	mux.HandleFunc("DELETE /api/v1/applications/{name}/operation", s.changes(s.appTerminate))
	mux.HandleFunc("GET /api/v1/applications/{name}/resource-tree", s.resourceTree)
	mux.HandleFunc("GET /api/v1/applications/{name}/managed-resources", s.managedResources)
	mux.HandleFunc("GET /api/v1/applications/{name}/manifests", s.appManifests)
	mux.HandleFunc("GET /api/v1/applications/{name}/revisions/{revision}/metadata", s.revisionMetadata)
	mux.HandleFunc("GET /api/v1/applications/{name}/logs", s.appLogs)
	mux.HandleFunc("GET /api/v1/applications/{name}/resource", s.appResource)
	mux.HandleFunc("GET /api/v1/applications/{name}/resource/actions", s.resourceActions)
	mux.HandleFunc("POST /api/v1/applications/{name}/resource/actions", s.runResourceAction)
	mux.HandleFunc("POST /api/v1/applications/{name}/resource/actions/v2", s.runResourceAction)

	mux.HandleFunc("GET /api/v1/applicationsets", s.appSetList)
	mux.HandleFunc("GET /api/v1/applicationsets/{name}", s.appSetGet)

	mux.HandleFunc("GET /api/v1/projects", s.projectList)
	mux.HandleFunc("GET /api/v1/projects/{name}", s.projectGet)
	mux.HandleFunc("POST /api/v1/projects/{project}/roles/{role}/token", s.projectRoleToken)

	ui := newWebUI()
	for _, p := range []string{"/{$}", "/assets/", "/login", "/applications", "/applications/", "/projects", "/projects/", "/applicationsets", "/applicationsets/"} {
		mux.HandleFunc("GET "+p, ui.serve)
	}

	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		fail(w, http.StatusNotFound, "%s %s is not an API of ferry-server (docs/user-guide/api.md lists those it offers)", r.Method, r.URL.Path)
	})
	return mux
}

// changes wraps a handler that may change the app it names (a GET may
// refresh it): the app's cached view is dropped after, so the next list
// queries it, and open streams follow it for a while (hub.follow) when
// the request was a change or a refresh.
func (s *server) changes(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		h(w, r)
		s.cache.forget(s.appName(r))
		if r.Method != http.MethodGet || r.URL.Query().Get("refresh") != "" {
			s.hub.follow(s.appName(r))
		}
	}
}

// version is GET /api/version, as Argo CD's VersionMessage, with the
// health of the policy: a refused edit of argocd-rbac-cm is said here.
func (s *server) version(w http.ResponseWriter, r *http.Request) {
	v := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		v = bi.Main.Version
	}
	policy := "ok"
	if p := s.live.policyProblem(); p != "" {
		policy = "the last good policy is in force: " + p
	}
	writeJSON(w, http.StatusOK, map[string]string{"Version": v, "GoVersion": runtime.Version(), "Platform": runtime.GOOS + "/" + runtime.GOARCH,
		"Policy": policy})
}

// settings is GET /api/v1/settings, the part of Argo CD's Settings a
// client needs before it logs in: the control namespace, and whether SSO
// is offered.
func (s *server) settings(w http.ResponseWriter, r *http.Request) {
	out := map[string]any{"controllerNamespace": s.cfg.controlNamespace}
	if s.cfg.temporalUIURL != "" { // Ferry's: where the web UI links an app's workflow
		out["temporalUIURL"], out["temporalNamespace"] = strings.TrimSuffix(s.cfg.temporalUIURL, "/"), s.cfg.namespace
	}
	if c, _, err := s.ssoConfig(r.Context()); err == nil {
		out["oidcConfig"] = map[string]any{"name": c.Name, "issuer": c.Issuer, "clientID": c.ClientID}
	}
	writeJSON(w, http.StatusOK, out)
}
