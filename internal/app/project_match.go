package app

import (
	"cmp"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/gobwas/glob"

	"github.com/ferry-gitops/ferry/internal/regions"
)

// The matching below follows Argo CD's AppProject (v2.5 and later, where
// "!" negation exists), so that a project file means in Ferry what it means
// there:
//
//   - sourceRepos and destinations are gobwas globs; a pattern "!p" matches
//     what p does not. "*" alone matches everything.
//   - A repository is allowed when some pattern matches it and no deny
//     pattern fails to match it. As in Argo CD's code (its docs say
//     otherwise), a deny pattern that lets a URL through counts as a
//     match, so a list of deny patterns alone allows everything else. URLs are compared normalised (lower case,
//     scp-like SSH as ssh, no ".git"), and '*' does not cross '/'.
//   - A destination is allowed when some entry matches its region (by name,
//     or by server) and namespace, and no deny entry excludes it.
//   - Kinds are path.Match globs over group and kind. A cluster-scoped kind
//     must be in clusterResourceWhitelist (empty: none) and not in
//     clusterResourceBlacklist; a namespaced kind must be in
//     namespaceResourceWhitelist (left out: all; empty list: none) and not
//     in namespaceResourceBlacklist. A blacklist beats a whitelist.
//
// Ferry addresses clusters by region, so a destination's server is known
// only for the in-cluster region (Argo CD's https://kubernetes.default.svc).
// For any other region a server pattern "*" matches, a deny pattern of a URL
// ("!https://x") does not exclude it, and any other URL does not match.

func isDenyPattern(p string) bool { return strings.HasPrefix(p, "!") }

// globMatch matches val against an Argo CD pattern.
func globMatch(pattern, val string, separators ...rune) bool {
	if isDenyPattern(pattern) {
		return !globMatchPlain(pattern[1:], val, separators...)
	}
	return globMatchPlain(pattern, val, separators...)
}

func globMatchPlain(pattern, val string, separators ...rune) bool {
	if pattern == "*" {
		return true
	}
	g, err := glob.Compile(pattern, separators...)
	if err != nil {
		return false // ValidateProject refuses such patterns
	}
	return g.Match(val)
}

// PermitsRepo reports whether an app of the project may render from repoURL.
func (p *AppProject) PermitsRepo(repoURL string) bool {
	src := normalizeRepoURL(repoURL)
	matched := false
	for _, pattern := range p.Spec.SourceRepos {
		var norm string
		if isDenyPattern(pattern) {
			norm = "!" + normalizeRepoURL(pattern[1:])
		} else {
			norm = normalizeRepoURL(pattern)
		}
		switch ok := globMatch(norm, src, '/'); {
		case ok:
			matched = true
		case isDenyPattern(norm):
			return false
		}
	}
	return matched
}

var sshURLRE = regexp.MustCompile(`^(ssh://)?([^/:]*?)@[^@]+$`)

// normalizeRepoURL is Argo CD's NormalizeGitURL: lower case, scp-like
// git@host:path read as ssh, no ".git", no "ssh://".
func normalizeRepoURL(repo string) string {
	repo = strings.ToLower(strings.TrimSpace(repo))
	if sshURLRE.MatchString(repo) && !strings.HasPrefix(repo, "ssh://") {
		repo = "ssh://" + strings.Replace(repo, ":", "/", 1)
	}
	repo = strings.TrimSuffix(repo, ".git")
	u, err := url.Parse(repo)
	if err != nil {
		return repo
	}
	return strings.TrimPrefix(u.String(), "ssh://")
}

// regionIdentity is how a region is seen by destination patterns.
// Its names are the region's own, its aliases and in-cluster for the
// in-cluster region; its servers the configured URL and Argo CD's in-cluster
// address for the in-cluster region.
type regionIdentity struct {
	names   []string
	servers []string // empty: unknown to Ferry
	// project is the AppProject the region is scoped to (regions.Region
	// Project); scopeKnown is false when no regions configuration was
	// given (rc nil, as the CLI checks before a worker does): whether the
	// region is scoped then cannot be told (project_scoped.go).
	project    string
	scopeKnown bool
}

func identityOf(region string, rc *regions.Config) regionIdentity {
	id := regionIdentity{names: []string{region}, scopeKnown: rc != nil}
	r, ok := rc.ByName(region)
	if !ok {
		return id
	}
	id.project = r.Project
	id.names = append(id.names, r.Aliases...)
	if r.Server != "" {
		id.servers = append(id.servers, r.Server)
	}
	if r.InCluster {
		id.names = append(id.names, InClusterName)
		id.servers = append(id.servers, InClusterServer)
	}
	return id
}

func (id regionIdentity) nameMatches(pattern string) bool {
	if pattern == "" {
		return false
	}
	if isDenyPattern(pattern) {
		for _, n := range id.names {
			if !globMatch(pattern, n) {
				return false
			}
		}
		return true
	}
	for _, n := range id.names {
		if globMatch(pattern, n) {
			return true
		}
	}
	return false
}

func (id regionIdentity) serverMatches(pattern string) bool {
	if pattern == "" {
		return false
	}
	if len(id.servers) > 0 {
		pattern = strings.TrimSuffix(pattern, "/")
		deny := isDenyPattern(pattern)
		for _, s := range id.servers {
			if ok := globMatch(pattern, strings.TrimSuffix(s, "/")); ok != deny {
				return ok
			}
		}
		return deny
	}
	if isDenyPattern(pattern) {
		return pattern != "!*"
	}
	return pattern == "*"
}

// PermitsDestination reports whether an app of the project may deploy to
// namespace of region; rc tells the region's aliases and server URLs
// (ValidateOptions.Regions).
func (p *AppProject) PermitsDestination(region, namespace string, rc *regions.Config) bool {
	return p.permits(identityOf(region, rc), namespace)
}

func (p *AppProject) permits(id regionIdentity, namespace string) bool {
	return p.destinationRule(id, namespace) == ""
}

// destinationRule names the rule of the project that refuses namespace of
// the region: "destinations" (no entry matches, or a deny entry excludes
// it), "permitOnlyProjectScopedClusters" (the region is not scoped to the
// project), or "" when the project permits it.
func (p *AppProject) destinationRule(id regionIdentity, namespace string) string {
	matched, denied := p.matchesDestinations(id, namespace)
	// A region scoped to the project is an implicit destination of it,
	// every namespace, as Argo CD adds {server, namespace: "*"} for each
	// cluster of the project; a deny entry still excludes it.
	matched = matched || p.scopes(id)
	switch {
	case !matched || denied:
		return "destinations"
	case p.Spec.PermitOnlyProjectScopedClusters && id.scopeKnown && !p.scopes(id):
		return "permitOnlyProjectScopedClusters"
	}
	return ""
}

func (p *AppProject) matchesDestinations(id regionIdentity, namespace string) (matched, denied bool) {
	for _, d := range p.Spec.Destinations {
		nameOK := id.nameMatches(d.Name)
		serverOK := id.serverMatches(d.Server)
		nsOK := globMatch(d.Namespace, namespace)
		switch {
		case (nameOK || serverOK) && nsOK:
			matched = true
		case (!nameOK && isDenyPattern(d.Name)) || (!serverOK && isDenyPattern(d.Server)) || (!nsOK && isDenyPattern(d.Namespace)):
			denied = true
		}
	}
	return matched, denied
}

// identityOfDestination is how an app's destination is seen: also by the
// name or server it was written with, which the CLI, checking before a
// worker resolves it, may not know as a region's (and by the in-cluster
// name for the in-cluster address).
func identityOfDestination(d Destination, rc *regions.Config) regionIdentity {
	region := d.region(rc)
	id := identityOf(region, rc)
	if d.Server != "" && !slices.Contains(id.servers, strings.TrimSuffix(d.Server, "/")) {
		id.servers = append(id.servers, strings.TrimSuffix(d.Server, "/"))
	}
	if d.Name != "" && !slices.Contains(id.names, d.Name) {
		id.names = append(id.names, d.Name)
	}
	if isInClusterServer(d.Server) && !slices.Contains(id.names, InClusterName) {
		id.names = append(id.names, InClusterName)
	}
	if d.Name == InClusterName && !slices.Contains(id.servers, InClusterServer) {
		id.servers = append(id.servers, InClusterServer)
	}
	return id
}

// PermitsKind reports whether an app of the project may create objects of
// group and kind; namespaced tells the kind's scope.
func (p *AppProject) PermitsKind(group, kind string, namespaced bool) bool {
	if namespaced {
		white := p.Spec.NamespaceResourceWhitelist
		allowed := white == nil || inGroupKinds(group, kind, white)
		return allowed && !inGroupKinds(group, kind, p.Spec.NamespaceResourceBlacklist)
	}
	return inGroupKinds(group, kind, p.Spec.ClusterResourceWhitelist) &&
		!inGroupKinds(group, kind, p.Spec.ClusterResourceBlacklist)
}

func inGroupKinds(group, kind string, list []GroupKind) bool {
	for _, gk := range list {
		if ok, err := path.Match(gk.Kind, kind); !ok || err != nil {
			continue
		}
		if ok, err := path.Match(gk.Group, group); ok && err == nil {
			return true
		}
	}
	return false
}

// KindRule says which rule of the project refuses a kind, for messages:
// "clusterResourceBlacklist", "clusterResourceWhitelist" (not in it), ...;
// empty when the kind is permitted.
func (p *AppProject) KindRule(group, kind string, namespaced bool) string {
	switch {
	case p.PermitsKind(group, kind, namespaced):
		return ""
	case namespaced && inGroupKinds(group, kind, p.Spec.NamespaceResourceBlacklist):
		return "namespaceResourceBlacklist"
	case namespaced:
		return "namespaceResourceWhitelist"
	case inGroupKinds(group, kind, p.Spec.ClusterResourceBlacklist):
		return "clusterResourceBlacklist"
	}
	return "clusterResourceWhitelist"
}

// ProjectError is an app that its project does not allow something.
type ProjectError struct {
	App, Project string
	// Problems each name what is not allowed, e.g. "destination
	// eu-west-1/kube-system".
	Problems []string
}

func (e *ProjectError) Error() string {
	return fmt.Sprintf("app %q: project %q does not allow %s: change the app, or have the project's owner allow it (ferry project get %s)",
		e.App, e.Project, strings.Join(e.Problems, "; nor "), e.Project)
}

// CheckApplication checks an app's repository and destinations against the
// project; it returns nil or a *ProjectError listing every problem. With rc
// nil (the regions are not known: the CLI, before the workers check) no
// region is known to be scoped to the project (project_scoped.go).
func (p *AppProject) CheckApplication(a *Application, rc *regions.Config) error {
	var problems []string
	for _, src := range a.SourceList() {
		if !p.PermitsRepo(src.RepoURL) {
			problems = append(problems, fmt.Sprintf("source repository %s (sourceRepos)", src.RepoURL))
		}
	}
	for _, d := range a.DestinationList() {
		id := identityOfDestination(d, rc)
		switch rule := p.destinationRule(id, d.Namespace); rule {
		case "":
		case "permitOnlyProjectScopedClusters":
			problems = append(problems, p.unscopedRegion(cmp.Or(id.names[0], d.Server), d.Namespace))
		default:
			problems = append(problems, fmt.Sprintf("destination %s/%s (%s)", cmp.Or(id.names[0], d.Server), d.Namespace, rule))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return &ProjectError{App: a.Metadata.Name, Project: p.Metadata.Name, Problems: problems}
}
