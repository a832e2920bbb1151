package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/appobjects"
	"github.com/ferry-gitops/ferry/internal/rbac"
	"github.com/ferry-gitops/ferry/internal/tokens"
)

// projectLines reads every project's role lines.
func projectLines(ctx context.Context, c client.Client) (map[string]rbac.ProjectLines, error) {
	names, err := ferryclient.ListProjects(ctx, c)
	if err != nil {
		return nil, err
	}
	out := make(map[string]rbac.ProjectLines, len(names))
	for _, name := range names {
		if v, err := ferryclient.GetProject(ctx, c, name); err == nil { // else deleted meanwhile
			out[name] = linesOf(&v.AppProject)
		}
	}
	return out, nil
}

// linesOf is a project's role lines for the enforcer.
func linesOf(p *app.AppProject) rbac.ProjectLines {
	var out rbac.ProjectLines
	for _, line := range p.PolicyLines() {
		fields := strings.Split(line, ",")
		for i := range fields {
			fields[i] = strings.TrimSpace(fields[i])
		}
		if fields[0] == "p" {
			out.P = append(out.P, fields[1:])
		} else {
			out.G = append(out.G, fields[1:])
		}
	}
	return out
}

// projectTokenValid: the token's role still lists its id, asked of the
// project now, so that a removed id is refused at once.
func (s *server) projectTokenValid(ctx context.Context, c *tokens.Claims) bool {
	project, role, ok := splitRoleSubject(c.Subject)
	if !ok {
		return false
	}
	v, err := ferryclient.GetProject(ctx, s.temporal, project)
	if err != nil || !v.TokenIssued(role, c.ID) {
		return false
	}
	// The role's lines as the project has them now, not as last polled:
	// a token made a moment ago works at once.
	s.live.setProject(project, linesOf(&v.AppProject))
	return true
}

// splitRoleSubject splits proj:PROJECT:ROLE.
func splitRoleSubject(sub string) (project, role string, ok bool) {
	rest, ok := strings.CutPrefix(sub, "proj:")
	if !ok {
		return "", "", false
	}
	project, role, ok = strings.Cut(rest, ":")
	return project, role, ok && project != "" && role != ""
}

// shownProject is a project as Argo CD's API shows it, with the status
// its roles' tokens make.
type shownProject struct {
	app.AppProject
	Status app.ProjectStatus `json:"status"`
}

func showProject(v *contract.ProjectView) shownProject {
	p := v.AppProject
	if p.APIVersion == "" {
		p.APIVersion, p.Kind = "argoproj.io/v1alpha1", "AppProject"
	}
	return shownProject{AppProject: p, Status: p.TokenStatus()}
}

// projectList is GET /api/v1/projects: the projects the caller may get.
func (s *server) projectList(w http.ResponseWriter, r *http.Request) {
	c := s.authenticate(w, r)
	if c == nil {
		return
	}
	names, err := ferryclient.ListProjects(r.Context(), s.temporal)
	if err != nil {
		fail(w, http.StatusServiceUnavailable, "%v", err)
		return
	}
	_, en := s.live.snapshot()
	items := []shownProject{}
	for _, name := range names {
		if !en.Allowed(c.who, rbac.Request{Resource: "projects", Action: "get", Object: name}) {
			continue
		}
		if v, err := ferryclient.GetProject(r.Context(), s.temporal, name); err == nil {
			items = append(items, showProject(v))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"metadata": map[string]any{}, "items": items})
}

// projectGet is GET /api/v1/projects/{name}.
func (s *server) projectGet(w http.ResponseWriter, r *http.Request) {
	c := s.authenticate(w, r)
	if c == nil {
		return
	}
	name := r.PathValue("name")
	if !s.authorize(w, c, rbac.Request{Resource: "projects", Action: "get", Object: name}, false) {
		return
	}
	if v := s.project(w, r, name); v != nil {
		writeJSON(w, http.StatusOK, showProject(v))
	}
}

// project answers the project query, or answers 404 or 503 and nil.
func (s *server) project(w http.ResponseWriter, r *http.Request, name string) *contract.ProjectView {
	v, err := ferryclient.GetProject(r.Context(), s.temporal, name)
	var nf *contract.ProjectNotFoundError
	switch {
	case errors.As(err, &nf):
		fail(w, http.StatusNotFound, "project %q not found", name)
		return nil
	case err != nil:
		fail(w, http.StatusServiceUnavailable, "project %q: %v", name, err)
		return nil
	}
	return v
}

// projectRoleToken is POST /api/v1/projects/{project}/roles/{role}/token:
// a signed token of the role, its id recorded in the role's jwtTokens (in
// the AppProject object when there is one, else in the project's
// workflow); deleting the id there revokes it. The caller must be
// allowed to update the project, as in Argo CD.
func (s *server) projectRoleToken(w http.ResponseWriter, r *http.Request) {
	c := s.authenticate(w, r)
	if c == nil {
		return
	}
	project, role := r.PathValue("project"), r.PathValue("role")
	var body struct {
		ExpiresIn json.Number `json:"expiresIn"`
		ID        string      `json:"id"`
	}
	if r.ContentLength != 0 && !readJSON(w, r, &body) {
		return
	}
	expiresIn, err := seconds(body.ExpiresIn)
	if err != nil {
		fail(w, http.StatusBadRequest, "expiresIn %q: write the token's lifetime in seconds (0: no end)", body.ExpiresIn)
		return
	}
	if !s.authorize(w, c, rbac.Request{Resource: "projects", Action: "update", Object: project}, true) {
		return
	}
	v := s.project(w, r, project)
	if v == nil {
		return
	}
	if _, ok := v.Role(role); !ok {
		fail(w, http.StatusNotFound, "project %q has no role %q: add it to spec.roles first", project, role)
		return
	}
	token, claims, err := s.signer.Issue(tokens.KindProject, app.RoleSubject(project, role), expiresIn, func(cl *tokens.Claims) {
		if body.ID != "" {
			cl.ID = body.ID
		}
	})
	if err != nil {
		fail(w, http.StatusInternalServerError, "sign the token: %v", err)
		return
	}
	if v.TokenIssued(role, claims.ID) {
		fail(w, http.StatusConflict, "role %q of project %q has a token with id %q already", role, project, claims.ID)
		return
	}
	rec := app.JWTToken{IssuedAt: claims.IssuedAt.Unix(), ID: claims.ID}
	if claims.ExpiresAt != nil {
		rec.ExpiresAt = claims.ExpiresAt.Unix()
	}
	if err := s.recordToken(r.Context(), &v.AppProject, role, rec); err != nil {
		fail(w, http.StatusInternalServerError, "record the token in project %q: %v", project, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"token": token})
}

// recordToken adds rec to the role's jwtTokens and waits until the
// project's workflow lists it, so that the token works once returned.
func (s *server) recordToken(ctx context.Context, p *app.AppProject, role string, rec app.JWTToken) error {
	res := s.dyn.Resource(appobjects.AppProjects).Namespace(s.cfg.controlNamespace)
	u, err := res.Get(ctx, p.Metadata.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		next := *p
		next.Spec.Roles = append([]app.ProjectRole(nil), p.Spec.Roles...)
		r, _ := next.Role(role)
		r.JWTTokens = append(append([]app.JWTToken(nil), r.JWTTokens...), rec)
		if _, err := ferryclient.ApplyProject(ctx, s.temporal, &next); err != nil {
			return err
		}
	case err != nil:
		return err
	default:
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := addObjectToken(u, role, rec); err != nil {
				return err
			}
			_, err := res.Update(ctx, u, metav1.UpdateOptions{FieldManager: "ferry-server"})
			if apierrors.IsConflict(err) {
				if fresh, gerr := res.Get(ctx, p.Metadata.Name, metav1.GetOptions{}); gerr == nil {
					u = fresh
				}
			}
			return err
		})
		if err != nil {
			return err
		}
	}
	for ctx.Err() == nil {
		if v, err := ferryclient.GetProject(ctx, s.temporal, p.Metadata.Name); err == nil && v.TokenIssued(role, rec.ID) {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return ctx.Err()
}

// addObjectToken adds rec to the role of an AppProject object.
func addObjectToken(u *unstructured.Unstructured, role string, rec app.JWTToken) error {
	roles, _, _ := unstructured.NestedSlice(u.Object, "spec", "roles")
	for i, raw := range roles {
		m, ok := raw.(map[string]any)
		if !ok || m["name"] != role {
			continue
		}
		list, _ := m["jwtTokens"].([]any)
		entry := map[string]any{"iat": rec.IssuedAt, "id": rec.ID}
		if rec.ExpiresAt != 0 {
			entry["exp"] = rec.ExpiresAt
		}
		m["jwtTokens"] = append(list, entry)
		roles[i] = m
		return unstructured.SetNestedSlice(u.Object, roles, "spec", "roles")
	}
	return fmt.Errorf("AppProject %s has no role %q", u.GetName(), role)
}

// seconds is a JSON number (or numeric string, as Argo CD's API writes
// int64s) of seconds; empty is 0.
func seconds(n json.Number) (time.Duration, error) {
	if n == "" {
		return 0, nil
	}
	v, err := n.Int64()
	if err != nil || v < 0 {
		return 0, fmt.Errorf("not a number of seconds")
	}
	return time.Duration(v) * time.Second, nil
}
