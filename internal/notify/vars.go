package notify

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/ferry-gitops/ferry/internal/app"
)

// AppObject is the app as conditions and templates see it: the
// Application's JSON, with Argo CD's names for what Ferry names otherwise
// (status.operationState.syncResult.revision and .resources,
// status.operationState.operation.sync.revision). It is deterministic for
// the same app and status.
func AppObject(a app.Application, st app.Status) (json.RawMessage, error) {
	obj := struct {
		app.Application
		Status app.Status `json:"status"`
	}{a, st}
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("app %q as notifications see it: %w", a.Metadata.Name, err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("app %q as notifications see it: %w", a.Metadata.Name, err)
	}
	if status, ok := m["status"].(map[string]any); ok {
		if op, ok := status["operationState"].(map[string]any); ok {
			op["syncResult"] = map[string]any{"revision": op["revision"], "resources": op["results"]}
			// The operation's own (info), with sync.revision added.
			operation, _ := op["operation"].(map[string]any)
			if operation == nil {
				operation = map[string]any{}
			}
			operation["sync"] = map[string]any{"revision": op["revision"]}
			op["operation"] = operation
		}
	}
	return json.Marshal(m)
}

// WithDeletionTimestamp is the app's object (AppObject) as it is while the
// app is being deleted: metadata.deletionTimestamp set, as Argo CD's, so
// that on-deleted holds.
func WithDeletionTimestamp(obj json.RawMessage, at time.Time) (json.RawMessage, error) {
	m, err := decodeApp(obj)
	if err != nil {
		return nil, err
	}
	md, _ := m["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		m["metadata"] = md
	}
	md["deletionTimestamp"] = at.UTC().Format(time.RFC3339)
	return json.Marshal(m)
}

func decodeApp(raw json.RawMessage) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("the app's object: %w", err)
	}
	return m, nil
}

// repoURLToHTTPS turns git@host:org/repo.git and ssh:// URLs into https.
func repoURLToHTTPS(repoURL string) string {
	if rest, ok := strings.CutPrefix(repoURL, "git@"); ok {
		host, path, _ := strings.Cut(rest, ":")
		return "https://" + host + "/" + path
	}
	if u, err := url.Parse(repoURL); err == nil && u.Scheme != "" && u.Host != "" {
		u.Scheme, u.User = "https", nil
		return u.String()
	}
	return repoURL
}

// fullNameByRepoURL is org/repo of a repository URL, without .git.
func fullNameByRepoURL(repoURL string) string {
	u, err := url.Parse(repoURLToHTTPS(repoURL))
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(strings.Trim(u.Path, "/"), ".git")
}
