package app

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ferry-gitops/ferry/internal/regions"
)

// Impersonation follows Argo CD's (2.13 and later): the first entry of
// destinationServiceAccounts whose server and namespace globs match the
// destination names the ServiceAccount that the sync impersonates, as
// "namespace:name" or as "name" in the destination namespace. Ferry
// addresses clusters by region, so an entry may also match by name (a
// glob of regions), and a server matches a region as in destinations: "*"
// any region, Argo CD's in-cluster address the in-cluster region. Unlike
// destinations, these globs know no "!" negation, as in Argo CD.

// serviceAccountForbiddenChars may not appear in a defaultServiceAccount,
// as in Argo CD.
const serviceAccountForbiddenChars = "!*[]{}\\/"

// ServiceAccountUser is the user a ServiceAccount authenticates as, and so
// the one a client impersonates to act as it.
func ServiceAccountUser(namespace, name string) string {
	return "system:serviceaccount:" + namespace + ":" + name
}

// ImpersonationError is a sync that has no ServiceAccount to impersonate:
// its project lists none for the destination, or impersonation is required
// and the project lists none at all.
type ImpersonationError struct {
	App, Project, Region, Namespace string
	// Required tells that the worker requires impersonation for every app
	// (the project may list no destinationServiceAccounts at all).
	Required bool
}

func (e *ImpersonationError) Error() string {
	why := "no destinationServiceAccounts entry matches it"
	if e.Required {
		why += ", and this region's workers impersonate for every sync (--require-impersonation)"
	}
	return fmt.Sprintf("app %q: project %q has no service account to impersonate for destination %s/%s: %s: add an entry {server or name, namespace, defaultServiceAccount} for it to the project",
		e.App, e.Project, e.Region, e.Namespace, why)
}

// ServiceAccountFor returns the user a sync of appName to namespace of
// region impersonates: that of the first destinationServiceAccounts entry
// that matches. It returns "" when the project lists none and required is
// false (the worker writes as itself), and an *ImpersonationError when no
// entry matches.
func (p *AppProject) ServiceAccountFor(appName, region, namespace string, rc *regions.Config, required bool) (string, error) {
	if len(p.Spec.DestinationServiceAccounts) == 0 && !required {
		return "", nil
	}
	id := identityOf(region, rc)
	for i, sa := range p.Spec.DestinationServiceAccounts {
		if !sa.matches(id, namespace) {
			continue
		}
		ns, name, err := sa.serviceAccount(namespace)
		if err != nil {
			return "", fmt.Errorf("app %q: project %q: spec.destinationServiceAccounts[%d] matches destination %s/%s: %w",
				appName, p.Metadata.Name, i, region, namespace, err)
		}
		return ServiceAccountUser(ns, name), nil
	}
	return "", &ImpersonationError{App: appName, Project: p.Metadata.Name, Region: region, Namespace: namespace,
		Required: required && len(p.Spec.DestinationServiceAccounts) == 0}
}

func (sa DestinationServiceAccount) matches(id regionIdentity, namespace string) bool {
	regionOK := (sa.Name != "" && id.nameMatches(sa.Name)) || (sa.Server != "" && id.serverMatches(sa.Server))
	return regionOK && globMatchPlain(sa.Namespace, namespace)
}

// serviceAccount splits defaultServiceAccount into namespace and name; an
// unqualified name is in the destination namespace.
func (sa DestinationServiceAccount) serviceAccount(destNamespace string) (namespace, name string, err error) {
	if problem := serviceAccountProblem(sa.DefaultServiceAccount); problem != "" {
		return "", "", fmt.Errorf("defaultServiceAccount: %s", problem)
	}
	if ns, name, qualified := strings.Cut(sa.DefaultServiceAccount, ":"); qualified {
		return ns, name, nil
	}
	if destNamespace == "" {
		return "", "", fmt.Errorf("defaultServiceAccount %q is in the destination namespace, and the destination names none: write it as NAMESPACE:%s",
			sa.DefaultServiceAccount, sa.DefaultServiceAccount)
	}
	return destNamespace, sa.DefaultServiceAccount, nil
}

// serviceAccountProblem says what is wrong with a defaultServiceAccount,
// or "".
func serviceAccountProblem(v string) string {
	switch {
	case strings.TrimSpace(v) == "":
		return "required: the ServiceAccount to impersonate, NAME (in the destination namespace) or NAMESPACE:NAME"
	case strings.ContainsAny(v, serviceAccountForbiddenChars):
		return fmt.Sprintf("%q holds one of %q, which a ServiceAccount's name cannot: write NAME or NAMESPACE:NAME", v, serviceAccountForbiddenChars)
	}
	ns, name, qualified := strings.Cut(v, ":")
	if !qualified {
		name = ns
	} else if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return fmt.Sprintf("%q: namespace %q is not valid (%s): write NAMESPACE:NAME", v, ns, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Sprintf("%q: ServiceAccount name %q is not valid (%s): write NAME or NAMESPACE:NAME", v, name, strings.Join(errs, "; "))
	}
	return ""
}

// validateServiceAccounts checks spec.destinationServiceAccounts.
func (v *validator) validateServiceAccounts(list []DestinationServiceAccount) {
	for i, sa := range list {
		field := fmt.Sprintf("spec.destinationServiceAccounts[%d]", i)
		if sa.Name == "" && sa.Server == "" {
			v.add(field+".server", "required: the destination server (a glob, '*' for any region) or Ferry's name (a glob of regions) this service account is for")
		}
		for _, f := range []struct{ name, value string }{{"server", sa.Server}, {"name", sa.Name}, {"namespace", sa.Namespace}} {
			switch {
			case strings.HasPrefix(f.value, "!"):
				v.add(field+"."+f.name, "%q: destinationServiceAccounts know no '!' negation (as in Argo CD): list the destinations it is for, the first match wins", f.value)
			case f.value != "":
				v.glob(field+"."+f.name, f.value)
			}
		}
		if problem := serviceAccountProblem(sa.DefaultServiceAccount); problem != "" {
			v.add(field+".defaultServiceAccount", "%s", problem)
		}
	}
}
