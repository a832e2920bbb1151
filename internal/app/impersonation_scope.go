package app

import (
	"fmt"
	"strings"

	"github.com/gobwas/glob"
)

// SystemNamespaces hold the cluster's own ServiceAccounts (controllers,
// bootstrap tokens): a region worker never impersonates one of them unless
// its operator lists the namespace (ImpersonationScope).
var SystemNamespaces = []string{"kube-system", "kube-public", "kube-node-lease"}

// ImpersonationScope is where a region worker may find the ServiceAccounts
// it impersonates: a project is written through Temporal, so whoever may
// write one must not pick a ServiceAccount the operator did not mean for
// apps, such as a controller's in kube-system. The cluster's RBAC should
// say the same (a RoleBinding granting impersonate in each listed namespace).
type ImpersonationScope struct {
	// Namespaces are globs of the namespaces whose ServiceAccounts may be
	// impersonated; empty allows every namespace but SystemNamespaces.
	Namespaces []string
	// Flag names the setting that lists them, for errors.
	Flag string
}

// Allows reports whether the ServiceAccount in namespace may be
// impersonated.
func (s ImpersonationScope) Allows(namespace string) bool {
	if len(s.Namespaces) == 0 {
		for _, ns := range SystemNamespaces {
			if namespace == ns {
				return false
			}
		}
		return true
	}
	for _, pattern := range s.Namespaces {
		if globMatchPlain(pattern, namespace) {
			return true
		}
	}
	return false
}

// Check refuses user, a ServiceAccount's user name that project names for
// app's destination in region, when it is outside the scope.
func (s ImpersonationScope) Check(user, appName, project, region string) error {
	rest, ok := strings.CutPrefix(user, "system:serviceaccount:")
	namespace, name, _ := strings.Cut(rest, ":")
	if !ok {
		return fmt.Errorf("app %q: project %q names %q to impersonate, which is no ServiceAccount", appName, project, user)
	}
	if s.Allows(namespace) {
		return nil
	}
	allowed := "every namespace but " + strings.Join(SystemNamespaces, ", ")
	if len(s.Namespaces) > 0 {
		allowed = "only namespaces " + strings.Join(s.Namespaces, ", ")
	}
	return fmt.Errorf("app %q: project %q names ServiceAccount %s:%s to write as in region %s, but the region's workers may impersonate ServiceAccounts of %s (%s): "+
		"name a ServiceAccount of the team's own namespace in the project's destinationServiceAccounts, or have the operator list %s",
		appName, project, namespace, name, region, allowed, s.Flag, namespace)
}

// Validate reports the first of the scope's globs that is not valid.
func (s ImpersonationScope) Validate() error {
	for _, pattern := range s.Namespaces {
		if _, err := glob.Compile(pattern); err != nil {
			return fmt.Errorf("%s: %q is not a valid glob of namespaces (%v): fix the pattern", s.Flag, pattern, err)
		}
	}
	return nil
}
