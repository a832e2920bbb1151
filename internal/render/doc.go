// Package render turns an Application source checked out from Git into
// Kubernetes objects, as Argo CD's repo-server does.
//
// Render picks the source type as Argo CD does (a kustomization file makes
// it Kustomize, else a Chart.yaml makes it Helm, else it is a directory),
// or takes the one spec.source names, and renders it:
//
//   - Directory: YAML and JSON manifests with Argo CD's recurse, include
//     and exclude.
//   - Kustomize: kustomize build through sigs.k8s.io/kustomize/api/krusty,
//     with spec.source.kustomize (namePrefix, nameSuffix, namespace,
//     images, commonLabels, commonAnnotations) applied as kustomize edit
//     would, built-in plugins only, remote bases only when
//     Renderer.AllowRemoteBases.
//   - Helm: helm template through helm.sh/helm/v3 for a chart in the
//     repository with its dependencies vendored in charts/ (or file://
//     inside the repository), with releaseName (the Application's name by
//     default), valueFiles, values, valuesObject, parameters, namespace,
//     and Capabilities (see Capabilities; Kubernetes v1.37.2 by default).
//     Hooks stay in the output with their helm.sh/hook annotations; test
//     hooks and NOTES.txt do not.
//
// Rendering reads only inside the repository, the class of Argo CD's
// CVE-2022-24348: the app path must be relative and free of ".."; value
// files, chart files, file:// dependencies and everything kustomize reads
// are resolved, symlinks included, and refused when they lead outside.
// The checkout is never written. Limits bound the files met, the bytes read
// and the time a Kustomize or Helm render takes (the render is abandoned,
// not stopped, when it runs over). Errors a user can fix (IsUserError) name
// the file and, where a parser gives one, the line:
//
//	render guestbook/deploy.yaml: line 12: mapping values are not allowed in this context
//
// Output is deterministic for a tree, a source, Options and a Renderer, so
// that the manifest cache can key it by Version and digest it (charts that
// call rand or now excepted):
//
//	r := &render.Renderer{Capabilities: render.Capabilities{KubeVersion: "v1.36.0"}}
//	res, err := r.Render(ctx, checkoutDir, app.Spec.Source, render.Options{AppName: app.Metadata.Name, Namespace: ns})
//	for _, obj := range res.Objects { ... }
package render
