package contract

import "net/url"

// AppPagePath is the path of an app's page in ferry-server's web UI:
// /applications/NAMESPACE/NAME, or /applications/NAME for an app that no
// Application object owns (the server's namespace), as in Argo CD.
func AppPagePath(namespace, name string) string {
	if namespace == "" {
		return "/applications/" + url.PathEscape(name)
	}
	return "/applications/" + url.PathEscape(namespace) + "/" + url.PathEscape(name)
}
