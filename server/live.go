package main

import (
	"context"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
	"k8s.io/client-go/kubernetes"

	"github.com/ferry-gitops/ferry/internal/accounts"
	"github.com/ferry-gitops/ferry/internal/rbac"
)

// live is what the server reads from the control namespace, kept up to
// date by informers: the accounts, and the policy with the projects'
// roles. An argocd-rbac-cm with problems leaves the last good policy in
// force, and its problems are said (policyProblem, /api/version).
type live struct {
	log      *slog.Logger
	config   *accounts.Config
	mu       sync.RWMutex
	accts    map[string]*accounts.Account
	policy   *rbac.Policy
	problem  string
	projects map[string]rbac.ProjectLines
	enforcer *rbac.Enforcer
}

func watchLive(ctx context.Context, kc kubernetes.Interface, ns string, log *slog.Logger) (*live, error) {
	l := &live{log: log}
	ready := make(chan struct{})
	defer close(ready)
	cfg, err := accounts.WatchConfig(ctx, kc, ns, func() {
		if <-ready; l.config != nil { // the first events wait until l.config is set
			l.reload()
		}
	})
	if err != nil {
		return nil, err
	}
	l.config = cfg
	l.reload()
	return l, nil
}

// configMap is the data of the ConfigMap name, or none.
func (l *live) configMap(name string) map[string]string { return l.config.ConfigMap(name) }

// reload reads the accounts and the policy again.
func (l *live) reload() {
	accts, problems := accounts.Read(l.configMap(accounts.ConfigMapName), l.config.Secret())
	for _, p := range problems {
		l.log.Warn("an account is left out", "problem", p)
	}
	policy, err := rbac.Parse(l.configMap(rbac.ConfigMapName))
	l.mu.Lock()
	defer l.mu.Unlock()
	l.accts = accts
	switch {
	case err != nil:
		if l.problem != err.Error() {
			l.log.Error("the policy is refused: the last good one stays in force", "problem", err)
		}
		l.problem = err.Error()
	default:
		l.policy, l.problem = policy, ""
	}
	l.rebuild()
}

// rebuild makes the enforcer of the policy and the projects' roles; l.mu
// is held.
func (l *live) rebuild() {
	var all rbac.ProjectLines
	names := slices.Sorted(maps.Keys(l.projects))
	for _, name := range names {
		all.P = append(all.P, l.projects[name].P...)
		all.G = append(all.G, l.projects[name].G...)
	}
	en, err := rbac.New(l.policy, all)
	if err != nil {
		l.log.Error("the policy could not be loaded: the last good one stays in force", "problem", err)
		l.problem = err.Error()
		return
	}
	l.enforcer = en
}

// snapshot is the accounts and the enforcer in force now.
func (l *live) snapshot() (map[string]*accounts.Account, *rbac.Enforcer) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.accts, l.enforcer
}

// policyProblem is why the last edit of argocd-rbac-cm is not in force,
// or "".
func (l *live) policyProblem() string {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.problem
}

// setProjects puts the projects' role lines in force.
func (l *live) setProjects(p map[string]rbac.ProjectLines) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.projects = p
	l.rebuild()
}

// setProject puts one project's role lines in force, when they changed.
func (l *live) setProject(name string, p rbac.ProjectLines) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if old, ok := l.projects[name]; ok && reflect.DeepEqual(old, p) {
		return
	}
	l.projects = maps.Clone(l.projects)
	if l.projects == nil {
		l.projects = map[string]rbac.ProjectLines{}
	}
	l.projects[name] = p
	l.rebuild()
}

// watchProjects reads the projects' roles every few seconds until ctx ends.
func (l *live) watchProjects(ctx context.Context, c client.Client) {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		if p, err := projectLines(ctx, c); err != nil {
			if ctx.Err() == nil && !strings.Contains(err.Error(), "context canceled") {
				l.log.Warn("read the projects' roles", "error", err)
			}
		} else {
			l.setProjects(p)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// waitForAccounts waits, a few seconds at most, until the informer has
// seen what was just written (cond holds of the accounts), so that the
// caller can use it at once: a new token, a new password.
func (l *live) waitForAccounts(ctx context.Context, cond func(map[string]*accounts.Account) bool) {
	for range 50 {
		if accts, _ := l.snapshot(); cond(accts) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}
