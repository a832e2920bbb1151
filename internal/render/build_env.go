package render

import (
	"os"
	"strings"

	"github.com/ferry-gitops/ferry/internal/app"
)

// BuildEnv is Argo CD's build environment of a render (its repo-server's
// newEnv): what Helm parameters and value file paths, Jsonnet variables,
// Kustomize's commonAnnotationsEnvsubst and plugins may name. A plugin
// also gets KUBE_VERSION and KUBE_API_VERSIONS (pluginEnv); Argo CD
// substitutes those nowhere else.
func BuildEnv(src app.Source, opts Options) map[string]string {
	short := func(n int) string { return opts.Revision[:min(n, len(opts.Revision))] }
	return map[string]string{
		"ARGOCD_APP_NAME":                   app.InstanceName(opts.AppName),
		"ARGOCD_APP_NAMESPACE":              opts.Namespace,
		"ARGOCD_APP_PROJECT_NAME":           "default",
		"ARGOCD_APP_REVISION":               opts.Revision,
		"ARGOCD_APP_REVISION_SHORT":         short(7),
		"ARGOCD_APP_REVISION_SHORT_8":       short(8),
		"ARGOCD_APP_SOURCE_REPO_URL":        src.RepoURL,
		"ARGOCD_APP_SOURCE_PATH":            src.Path,
		"ARGOCD_APP_SOURCE_TARGET_REVISION": src.TargetRevision,
	}
}

// Envsubst substitutes the build environment into s as Argo CD's
// Env.Envsubst does: $NAME and ${NAME}, empty when env lacks NAME, $$ for
// a literal $.
func Envsubst(s string, env map[string]string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	return os.Expand(s, func(name string) string {
		if name == "$" {
			return "$"
		}
		return env[name]
	})
}

// HelmNamesBuildEnv reports whether h's parameters, value file paths or
// file parameter paths can name the build environment (hold a $ that
// Envsubst reads), so that the render depends on more than the chart, its
// values and the release: the manifest cache key then holds the build
// environment. The $ref of a value file of another source does not count.
func HelmNamesBuildEnv(h *app.HelmSource) bool {
	if h == nil {
		return false
	}
	for _, p := range h.Parameters {
		if strings.Contains(p.Value, "$") {
			return true
		}
	}
	for _, vf := range h.ValueFiles {
		if _, rel, ok := app.RefValueFile(vf); ok {
			vf = rel
		}
		if strings.Contains(vf, "$") {
			return true
		}
	}
	for _, fp := range h.FileParameters {
		if strings.Contains(fp.Path, "$") {
			return true
		}
	}
	return false
}
