package render

import (
	"crypto/sha256"
	"encoding/hex"
	"runtime/debug"
	"slices"
	"strings"
)

// format names Ferry's own rendering rules. Bump it whenever the same
// source could render differently for a reason the library versions do not
// show: it is part of every manifest cache key.
const format = "ferry-render/3"

// The libraries whose versions are part of Version, with the versions
// go.mod requires: used when the binary carries no module information.
var renderLibraries = []struct{ path, fallback string }{
	{"helm.sh/helm/v3", "v3.22.0"},
	{"sigs.k8s.io/kustomize/api", "v0.21.2"},
	{"sigs.k8s.io/kustomize/kyaml", "v0.21.2"},
}

// Version names the renderers' output: Ferry's rendering rules and the
// Helm and Kustomize library versions built in, e.g.
// "ferry-render/3 helm/v3.22.0 kustomize-api/v0.21.2 kustomize-kyaml/v0.21.2".
// It is part of every manifest cache key, so a new Ferry or library version
// never reuses sets rendered by an old one. Renderer.Version adds the
// worker's settings that change output.
var Version = buildVersion(readBuildInfo())

func readBuildInfo() map[string]string {
	deps := map[string]string{}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return deps
	}
	for _, d := range bi.Deps {
		v := d.Version
		if d.Replace != nil {
			v = d.Replace.Version
			if v == "" {
				v = "replaced" // a local replace: no version to name
			}
		}
		deps[d.Path] = v
	}
	return deps
}

func buildVersion(deps map[string]string) string {
	parts := []string{format}
	for _, lib := range renderLibraries {
		v := deps[lib.path]
		if v == "" {
			v = lib.fallback
		}
		parts = append(parts, libraryName(lib.path)+"/"+v)
	}
	return strings.Join(parts, " ")
}

// libraryName shortens a module path for Version: "helm", "kustomize-api".
func libraryName(modPath string) string {
	switch {
	case strings.HasPrefix(modPath, "helm.sh/helm"):
		return "helm"
	case strings.HasPrefix(modPath, "sigs.k8s.io/kustomize/"):
		return "kustomize-" + strings.TrimPrefix(modPath, "sigs.k8s.io/kustomize/")
	}
	return modPath
}

// Version is the package Version plus whatever in r changes rendered
// output: Capabilities that differ from the defaults. Workers that share a
// manifest cache must agree on it, and do when they run the same binary with
// the same settings.
//
// Plugins change output too, and what a source without a section is
// (discovery): each plugin's full name and the digest of its definition
// are in it, so a changed plugin renders again. So does AllowRemoteBases,
// which renders what a worker without it refuses; the commits of the
// remote bases are in the keys of the sets that have them. So do the
// Kustomize build options.
func (r *Renderer) Version() string {
	v := Version
	if r.AllowRemoteBases {
		v += " remote-bases/1"
	}
	v += r.Kustomize.version()
	caps := r.Capabilities.normalized()
	if !caps.isDefault() {
		h := sha256.New()
		h.Write([]byte(caps.KubeVersion))
		for _, v := range caps.APIVersions {
			h.Write([]byte{0})
			h.Write([]byte(v))
		}
		v += " capabilities/" + hex.EncodeToString(h.Sum(nil))[:16]
	}
	if len(r.Plugins) > 0 {
		h := sha256.New()
		for _, p := range r.Plugins {
			h.Write([]byte(p.FullName() + "\x00" + p.Digest() + "\x00"))
		}
		v += " plugins/" + hex.EncodeToString(h.Sum(nil))[:16]
	}
	return v
}

func sortedUnique(in []string) []string {
	out := slices.Clone(in)
	slices.Sort(out)
	return slices.Compact(out)
}
