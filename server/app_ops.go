package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/appobjects"
)

// syncBody is Argo CD's ApplicationSyncRequest, the part Ferry takes.
type syncBody struct {
	Revision string `json:"revision"`
	DryRun   bool   `json:"dryRun"`
	Prune    bool   `json:"prune"`
	Strategy *struct {
		Apply *struct{ Force bool } `json:"apply"`
		Hook  *struct{ Force bool } `json:"hook"`
	} `json:"strategy"`
	Resources   []app.SyncResource `json:"resources"`
	SyncOptions *struct {
		Items []string `json:"items"`
	} `json:"syncOptions"`
	RetryStrategy *app.RetryPolicy `json:"retryStrategy"`
	Infos         []app.Info       `json:"infos"`
	// Manifests are argocd app sync --local's manifests, which the server
	// refuses (refused) rather than sync Git in their place.
	Manifests []string `json:"manifests"`
}

// refused is why the server does not take the request: local manifests,
// which it would have to keep in clear and cannot hand to the workers.
func (b syncBody) refused(name string) error {
	if b.Manifests == nil {
		return nil
	}
	return fmt.Errorf("application %q: manifests (argocd app sync --local) are not taken by ferry-server: it does not reach the workers' manifest cache, "+
		"and manifests never go through its API; an operator syncs them with ferry app sync %s --local DIR (Temporal and the workers' Redis), or commit them", name, name)
}

func (b syncBody) request() contract.SyncRequest {
	req := contract.SyncRequest{Revision: b.Revision, DryRun: b.DryRun, Prune: b.Prune, Resources: b.Resources,
		Retry: b.RetryStrategy, Info: b.Infos}
	if st := b.Strategy; st != nil {
		req.Force = (st.Apply != nil && st.Apply.Force) || (st.Hook != nil && st.Hook.Force)
	}
	if b.SyncOptions != nil {
		for _, o := range b.SyncOptions.Items {
			if strings.EqualFold(o, "ApplyOutOfSyncOnly=true") {
				req.ApplyOutOfSyncOnly = true
			}
		}
	}
	return req
}

// appSync is POST /api/v1/applications/{name}/sync: the app, once its
// operation began.
func (s *server) appSync(w http.ResponseWriter, r *http.Request) {
	c := s.authenticate(w, r)
	if c == nil {
		return
	}
	var body syncBody
	if !readJSON(w, r, &body) {
		return
	}
	v := s.appFor(w, r, c, "sync", true)
	if v == nil {
		return
	}
	if err := body.refused(v.Metadata.Name); err != nil {
		fail(w, http.StatusBadRequest, "%v", err)
		return
	}
	s.operate(w, r, c, v, body.request(), "sync")
}

// appRollback is POST /api/v1/applications/{name}/rollback: the history
// entry id synced again, as Argo CD's ApplicationRollbackRequest.
func (s *server) appRollback(w http.ResponseWriter, r *http.Request) {
	c := s.authenticate(w, r)
	if c == nil {
		return
	}
	var body struct {
		ID     json.Number `json:"id"`
		DryRun bool        `json:"dryRun"`
		Prune  bool        `json:"prune"`
	}
	if !readJSON(w, r, &body) {
		return
	}
	id, err := body.ID.Int64()
	if err != nil {
		fail(w, http.StatusBadRequest, "id %q: write the ID of a history entry, such as 3 (GET the application: status.history)", body.ID)
		return
	}
	v := s.appFor(w, r, c, "sync", true)
	if v == nil {
		return
	}
	s.operate(w, r, c, v, contract.SyncRequest{RollbackID: &id, DryRun: body.DryRun, Prune: body.Prune}, "rollback")
}

// operate starts req on v's app and answers the app as it is then.
func (s *server) operate(w http.ResponseWriter, r *http.Request, c *caller, v *contract.View, req contract.SyncRequest, verb string) {
	name := v.Metadata.Name
	if err := ferryclient.ManualSyncAllowed(r.Context(), s.temporal, v, nil); err != nil {
		fail(w, http.StatusForbidden, "%s application %q: %v", verb, name, err)
		return
	}
	// Who asked is the server's to say, never the request's.
	req.InitiatedBy = &app.InitiatedBy{Username: c.name()}
	var op app.OperationState
	handle, err := ferryclient.Sync(r.Context(), s.temporal, name, req, client.WorkflowUpdateStageCompleted)
	if err == nil {
		err = handle.Get(r.Context(), &op)
	}
	if err != nil {
		fail(w, http.StatusBadRequest, "%s application %q: %v", verb, name, err)
		return
	}
	s.event(r, c, v, "OperationStarted", fmt.Sprintf("%s initiated %s to %s", c.name(), verb, firstOf(req.Revision, op.Revision)))
	if nv, err := ferryclient.Query(r.Context(), s.temporal, name); err == nil {
		v = nv
	}
	writeJSON(w, http.StatusOK, s.shown(v))
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// event records an Event on v's Application object, if it has one.
func (s *server) event(r *http.Request, c *caller, v *contract.View, reason, message string) {
	if v.Owner == nil || v.Owner.Object == "" {
		return
	}
	ns, name, _ := strings.Cut(v.Owner.Object, "/")
	s.audit.event(r.Context(), ns, name, reason, message, false)
}

// appTerminate is DELETE /api/v1/applications/{name}/operation.
func (s *server) appTerminate(w http.ResponseWriter, r *http.Request) {
	c := s.authenticate(w, r)
	if c == nil {
		return
	}
	v := s.appFor(w, r, c, "sync", true)
	if v == nil {
		return
	}
	if _, err := ferryclient.TerminateOp(r.Context(), s.temporal, v.Metadata.Name); err != nil {
		fail(w, http.StatusBadRequest, "terminate the operation of application %q: %v", v.Metadata.Name, err)
		return
	}
	s.event(r, c, v, "OperationTerminated", c.name()+" terminated running operation")
	writeJSON(w, http.StatusOK, map[string]any{})
}

// appDelete is DELETE /api/v1/applications/{name}[?cascade=false]: an app
// of an Application object is deleted as the object (with Argo CD's
// resources finalizer when it cascades), any other through its workflow.
func (s *server) appDelete(w http.ResponseWriter, r *http.Request) {
	c := s.authenticate(w, r)
	if c == nil {
		return
	}
	var cascade *bool
	if raw := r.URL.Query().Get("cascade"); raw != "" {
		b, err := strconv.ParseBool(raw)
		if err != nil {
			fail(w, http.StatusBadRequest, "cascade=%q: write cascade=true or cascade=false", raw)
			return
		}
		cascade = &b
	}
	v := s.appFor(w, r, c, "delete", true)
	if v == nil {
		return
	}
	name := v.Metadata.Name
	var err error
	if v.Owner != nil && v.Owner.Object != "" {
		ns, obj, _ := strings.Cut(v.Owner.Object, "/")
		_, err = appobjects.Delete(r.Context(), s.dyn.Resource(appobjects.Applications).Namespace(ns), obj,
			cascade == nil || *cascade, r.URL.Query().Get("propagationPolicy"))
	} else {
		_, err = ferryclient.DeleteApp(r.Context(), s.temporal, name, contract.DeleteRequest{Cascade: cascade,
			Propagation: r.URL.Query().Get("propagationPolicy")})
	}
	if err != nil {
		fail(w, http.StatusBadRequest, "delete application %q: %v", name, err)
		return
	}
	s.event(r, c, v, "ResourceDeleted", c.name()+" deleted application")
	writeJSON(w, http.StatusOK, map[string]any{})
}
