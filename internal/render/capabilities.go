package render

import (
	"fmt"
	"strings"
	"sync"

	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/ferry-gitops/ferry/internal/app"
)

// DefaultKubeVersion is the Kubernetes version Helm templates see
// (.Capabilities.KubeVersion) unless the worker or the Application says
// otherwise: the version Ferry is built and tested against.
const DefaultKubeVersion = "v1.37.2"

// Capabilities describe the target clusters to Helm templates, as helm
// template's --kube-version and --api-versions do. The control worker
// renders once for all regions, so they are a statement about the regions
// rather than a probe of one; set them to what the oldest region runs.
type Capabilities struct {
	// KubeVersion is .Capabilities.KubeVersion, e.g. "v1.37.2" or "1.36".
	// Empty means DefaultKubeVersion.
	KubeVersion string
	// APIVersions are added to the built-in set that
	// .Capabilities.APIVersions.Has sees: every group/version and
	// group/version/Kind of Kubernetes' own APIs at the client version
	// Ferry is built with, CRDs included. Add the APIs the regions serve
	// beyond those, e.g. "monitoring.coreos.com/v1" or
	// "monitoring.coreos.com/v1/ServiceMonitor".
	APIVersions []string
}

func (c Capabilities) normalized() Capabilities {
	if c.KubeVersion == "" {
		c.KubeVersion = DefaultKubeVersion
	}
	c.APIVersions = sortedUnique(c.APIVersions)
	return c
}

func (c Capabilities) isDefault() bool {
	return c.KubeVersion == DefaultKubeVersion && len(c.APIVersions) == 0
}

// helmCapabilities merges the worker's capabilities with the Application's
// helm.kubeVersion (which replaces the version) and helm.apiVersions
// (which add to the set, as Argo CD passes them to helm template).
func (r *Renderer) helmCapabilities(appPath string, h *app.HelmSource) (*chartutil.Capabilities, error) {
	caps := r.Capabilities.normalized()
	kv, field := caps.KubeVersion, "the worker's Kubernetes version"
	var extra []string
	if h != nil {
		if h.KubeVersion != "" {
			kv, field = h.KubeVersion, "spec.source.helm.kubeVersion"
		}
		extra = h.APIVersions
	}
	parsed, err := version.ParseGeneric(kv)
	if err != nil {
		return nil, &SourceError{Path: appPath, Msg: fmt.Sprintf("%s %q is not a Kubernetes version: write it as v1.37.2 or 1.37", field, kv)}
	}
	if !strings.HasPrefix(kv, "v") {
		kv = "v" + kv
	}
	builtin := builtinAPIVersions()
	apis := make([]string, 0, len(builtin)+len(caps.APIVersions)+len(extra))
	apis = append(apis, builtin...)
	apis = append(apis, caps.APIVersions...)
	apis = append(apis, extra...)
	// Only the Helm version and commit, not the Go version helm's default
	// carries: output must not depend on the toolchain a worker was built
	// with.
	hv := chartutil.DefaultCapabilities.HelmVersion
	hv.Version, hv.GoVersion = helmVersion(), ""
	return &chartutil.Capabilities{
		KubeVersion: chartutil.KubeVersion{
			Version: kv,
			Major:   fmt.Sprint(parsed.Major()),
			Minor:   fmt.Sprint(parsed.Minor()),
		},
		APIVersions: chartutil.VersionSet(sortedUnique(apis)),
		HelmVersion: hv,
	}, nil
}

var builtinAPIs = sync.OnceValue(func() []string {
	apis := append([]string(nil), chartutil.DefaultVersionSet...)
	for gvk := range scheme.Scheme.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal || strings.HasSuffix(gvk.Kind, "List") || metaKinds[gvk.Kind] {
			continue
		}
		apis = append(apis, gvk.GroupVersion().String()+"/"+gvk.Kind)
	}
	return sortedUnique(apis)
})

// metaKinds are registered in every group version without being resources.
var metaKinds = map[string]bool{
	"WatchEvent": true, "Status": true, "DeleteOptions": true, "ListOptions": true, "GetOptions": true,
	"CreateOptions": true, "UpdateOptions": true, "PatchOptions": true, "ExportOptions": true,
	"APIVersions": true, "APIGroup": true, "APIResourceList": true,
}

// builtinAPIVersions is what .Capabilities.APIVersions holds by default:
// Helm's built-in set of group/versions (Kubernetes' own APIs at the
// client version Ferry is built with, apiextensions included) plus each of
// their kinds as "group/version/Kind", which a real cluster's discovery
// gives and helm template alone does not, so that charts testing for a
// kind ("apps/v1/Deployment") render as they would against a cluster.
func builtinAPIVersions() []string { return builtinAPIs() }

// helmVersion is the Helm library version built in, as Version names it.
func helmVersion() string {
	for _, part := range strings.Fields(Version) {
		if v, ok := strings.CutPrefix(part, "helm/"); ok {
			return v
		}
	}
	return renderLibraries[0].fallback
}
