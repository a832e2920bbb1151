package render

import (
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	for _, want := range []string{format, "helm/v3.", "kustomize-api/v0.", "kustomize-kyaml/v0."} {
		if !strings.Contains(Version, want) {
			t.Errorf("Version %q does not name %q", Version, want)
		}
	}
	// The fallbacks follow go.mod: a test binary carries module versions.
	deps := readBuildInfo()
	for _, lib := range renderLibraries {
		if v := deps[lib.path]; v != "" && v != lib.fallback {
			t.Errorf("%s is %s in the build but %s in renderLibraries: update the fallback", lib.path, v, lib.fallback)
		}
	}
	if got := buildVersion(map[string]string{}); got != format+" helm/v3.22.0 kustomize-api/v0.21.2 kustomize-kyaml/v0.21.2" {
		t.Errorf("fallback version %q", got)
	}
	if got := buildVersion(map[string]string{"helm.sh/helm/v3": "v3.99.0"}); !strings.Contains(got, "helm/v3.99.0") {
		t.Errorf("version from build info %q", got)
	}

	var zero Renderer
	if zero.Version() != Version {
		t.Errorf("zero Renderer.Version = %q, want Version", zero.Version())
	}
	a := Renderer{Capabilities: Capabilities{APIVersions: []string{"b/v1", "a/v1"}}}
	b := Renderer{Capabilities: Capabilities{KubeVersion: DefaultKubeVersion, APIVersions: []string{"a/v1", "b/v1", "a/v1"}}}
	c := Renderer{Capabilities: Capabilities{KubeVersion: "v1.30.0"}}
	if a.Version() != b.Version() || a.Version() == Version || c.Version() == Version || c.Version() == a.Version() {
		t.Errorf("capability versions: %q %q %q", a.Version(), b.Version(), c.Version())
	}
}
