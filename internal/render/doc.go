// Package render turns an Application source checked out from Git into
// Kubernetes objects.
//
// Render picks the source type as Argo CD does and renders it; Directory
// renders plain YAML and JSON manifests with Argo CD's directory options
// (recurse, include, exclude). Kustomize and Helm sources are detected but
// not rendered yet: they give an *UnsupportedError.
//
// Rendering reads only inside the repository: the app path must be
// relative and free of "..", and symlinks leading outside the checkout are
// refused. Limits bound the number of files met and the bytes read. Errors a
// user can fix (IsUserError) name the file and the line:
//
//	render guestbook/deploy.yaml: line 12: mapping values are not allowed in this context
//
// Output is deterministic for a given tree, so that the manifest cache can
// key and digest it:
//
//	res, err := render.Render(ctx, checkoutDir, app.Spec.Source)
//	for _, obj := range res.Objects { ... }
package render
