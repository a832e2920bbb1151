package app

import (
	"strings"
)

// An app is known by one name. An app whose Application object is in the
// control namespace, or that has no object, is called by its metadata.name
// ("web"); an app whose object is in another namespace (Argo CD's "apps in
// any namespace") by namespace and name, "team-a/web", as Argo CD's CLI
// writes it. The same name is the app's workflow ID after "app/", its
// status' name and what the ferry CLI takes.

// QualifiedName is the name of the app whose object is metadata.name name
// in namespace ns, where ns is "" for the control namespace.
func QualifiedName(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// SplitName splits an app's name into the namespace of its object ("" for
// the control namespace) and its metadata.name.
func SplitName(appName string) (ns, name string) {
	if ns, name, ok := strings.Cut(appName, "/"); ok {
		return ns, name
	}
	return "", appName
}

// InstanceName is the name as Argo CD writes it where a slash cannot
// stand (a label value, $ARGOCD_APP_NAME): "team-a_web"; a name of the
// control namespace is unchanged.
func InstanceName(appName string) string {
	return strings.Replace(appName, "/", "_", 1)
}

// Qualify names a, read from an object in namespace ns ("" for the
// control namespace), as the app of that object: a.Metadata.Name becomes
// the qualified name, and a.Metadata.Namespace ns.
func (a *Application) Qualify(ns string) {
	if ns == "" {
		return
	}
	a.Metadata.Name = QualifiedName(ns, a.Metadata.Name)
	a.Metadata.Namespace = ns
}

// ReleaseName is the Helm release name of a source that sets none: the
// app's metadata.name, without the namespace of a qualified name.
func (a *Application) ReleaseName() string {
	_, name := SplitName(a.Metadata.Name)
	return name
}
