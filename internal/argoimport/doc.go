// Package argoimport brings a running Argo CD over to Ferry (ferry import,
// ferry app takeover): it reads the installation's objects from its
// namespace, says what Ferry carries and what it cannot (every object and
// field), and writes what it carries where Ferry reads it.
//
//   - Cluster Secrets become the regions configuration and a kubeconfig
//     (regions.go): name, server, labels, annotations and project; bearer
//     tokens, basic auth, TLS client config and exec providers.
//   - Applications, AppProjects and ApplicationSets go into the control
//     namespace (objects.go, appsets.go). An Application arrives in shadow:
//     Ferry compares it and reports, but never writes, because its
//     automated sync policy and its finalizers are kept aside in
//     annotations (AnnotationShadow) until the app is taken over. An
//     ApplicationSet keeps its template's the same way, and marks the apps
//     it generates in shadow; Argo CD's Applications it owns are its to
//     generate, not imported one by one.
//   - Repository and repo-creds Secrets and the ConfigMaps Ferry reads in
//     the same shape (argocd-cm, argocd-rbac-cm, argocd-notifications-cm,
//     argocd-tls-certs-cm, and the argocd-notifications-secret Secret) are
//     copied as they are.
//
// Takeover (takeover.go; TakeoverSet for a set) deletes Argo CD's
// Application without a cascade, so that Argo CD deletes nothing, and
// gives the Ferry app back its sync policy and finalizers; Ferry's first
// sync then takes over the fields Argo CD's field managers own
// (internal/kube, takeover.go).
package argoimport
