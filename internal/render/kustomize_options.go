package render

import (
	"fmt"
	"strings"
)

// KustomizeOptions are the kustomize build options (Argo CD's argocd-cm
// kustomize.buildOptions) that Ferry takes: each widens what a build may
// do, within the checkout.
type KustomizeOptions struct {
	// EnableHelm (--enable-helm) inflates the charts of helmCharts: the
	// worker fetches those of a repository through its chart source (with
	// its credentials, cache, limits and host policy) and the render
	// inflates them with Ferry's Helm, in the sandbox (kustomize_helm.go).
	EnableHelm bool `json:"enableHelm,omitempty"`
	// LoadRestrictorNone (--load-restrictor LoadRestrictionsNone) lets a
	// kustomization read files outside its own directory; never outside
	// the repository.
	LoadRestrictorNone bool `json:"loadRestrictorNone,omitempty"`
}

// ParseKustomizeBuildOptions reads argocd-cm's kustomize.buildOptions, the
// flags Argo CD passes to kustomize build. Ferry takes --enable-helm and
// --load-restrictor LoadRestrictionsNone (or =LoadRestrictionsRootOnly,
// the default); any other flag is refused, every one named at once.
func ParseKustomizeBuildOptions(s string) (KustomizeOptions, error) {
	var o KustomizeOptions
	var bad []string
	args := strings.Fields(s)
	for i := 0; i < len(args); i++ {
		flag, value, hasValue := strings.Cut(args[i], "=")
		switch flag {
		case "--enable-helm":
			o.EnableHelm = true
		case "--load-restrictor", "--load_restrictor":
			if !hasValue && i+1 < len(args) {
				i++
				value = args[i]
			}
			switch value {
			case "LoadRestrictionsNone":
				o.LoadRestrictorNone = true
			case "LoadRestrictionsRootOnly":
			default:
				bad = append(bad, fmt.Sprintf("%s %q (give LoadRestrictionsNone or LoadRestrictionsRootOnly)", flag, value))
			}
		default:
			bad = append(bad, args[i])
		}
	}
	if len(bad) > 0 {
		return o, fmt.Errorf("argocd-cm kustomize.buildOptions: %s not supported: Ferry takes --enable-helm and --load-restrictor LoadRestrictionsNone; remove the others",
			strings.Join(bad, ", "))
	}
	return o, nil
}

// version is what the options add to Renderer.Version: they change what
// a build gives.
func (o KustomizeOptions) version() string {
	var v string
	if o.EnableHelm {
		v += " kustomize-helm/1"
	}
	if o.LoadRestrictorNone {
		v += " kustomize-load-none/1"
	}
	return v
}
