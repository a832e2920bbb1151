package app

import (
	"net/url"
	"strings"
)

// ValueFileURL reports whether a helm.valueFiles entry is a URL
// (http:// or https://), which the worker fetches for the render under
// its host policy, as Argo CD has Helm fetch it.
func ValueFileURL(vf string) bool {
	low := strings.ToLower(vf)
	return strings.HasPrefix(low, "https://") || strings.HasPrefix(low, "http://")
}

// checkValueFileURL says what is wrong with a value file given as a URL,
// "" when nothing is: http or https (Argo CD's default
// helm.valuesFileSchemes), a host, and no credentials, which would sit in
// the Application and in every history that carries it. shown is the URL
// to show, without its credentials.
func checkValueFileURL(raw string) (shown, msg string) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return "(not a URL)", "is not a URL: write https://host/path/values.yaml, or a path relative to spec.source.path"
	case u.User != nil:
		u.User = nil
		return u.String(), "holds credentials: they would be kept in the Application and its histories, and the worker sends none (as Argo CD's Helm sends none); serve the file without them, or commit it to the repository"
	case !ValueFileURL(raw):
		return raw, "is a URL of a scheme the worker does not fetch: write an http:// or https:// URL, or commit the file beside the chart"
	case u.Host == "":
		return raw, "names no host: write https://host/path/values.yaml"
	}
	return raw, ""
}
