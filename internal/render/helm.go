package render

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// helm renders a chart in the repository as helm template does for Argo
// CD: release name spec.source.helm.releaseName or the Application's name,
// namespace spec.source.helm.namespace or the destination's, CRDs from
// crds/ included (unless skipCrds), values merged as helmValues says,
// Capabilities from the Renderer and the Application. Hooks stay in the
// output as ordinary objects carrying their helm.sh/hook annotations, for
// the sync to run; test hooks are left out (Argo CD never runs them),
// and so is NOTES.txt. Templates cannot reach a cluster (lookup finds
// nothing) or DNS.
func (r *Renderer) helm(ctx context.Context, t *target, h *app.HelmSource, opts Options, env map[string]string) ([]*unstructured.Unstructured, error) {
	limits := r.Limits.withDefaults()
	if h == nil {
		h = &app.HelmSource{}
	}
	release := h.ReleaseName
	if release == "" {
		_, release = app.SplitName(opts.AppName)
	}
	if release == "" {
		return nil, &SourceError{Path: t.appPath, Msg: "no Helm release name: set spec.source.helm.releaseName (the worker did not pass the Application's name)"}
	}
	if len(release) > app.MaxReleaseNameLength {
		return nil, &SourceError{Path: t.appPath, Msg: fmt.Sprintf("Helm release name %q is %d characters long and Helm allows %d: set a shorter spec.source.helm.releaseName",
			release, len(release), app.MaxReleaseNameLength)}
	}
	namespace := h.Namespace
	if namespace == "" {
		namespace = opts.Namespace
	}
	if namespace == "" {
		namespace = "default"
	}
	caps, err := r.helmCapabilities(t.appPath, h)
	if err != nil {
		return nil, err
	}
	// The timeout covers reading the values and loading the chart: a tree
	// of symlinks can make the walk as slow as any template.
	return runBounded(ctx, limits, t.appPath, func(ctx context.Context) ([]*unstructured.Unstructured, error) {
		b := newBudget(limits, t.appPath)
		vals, err := helmValues(t, h, b, opts.RefFiles, env)
		if err != nil {
			return nil, err
		}
		chrt, err := loadChart(ctx, t.root, t.dir, b, 0)
		if err != nil {
			return nil, err
		}
		fail := func(err error) error { return toolError("helm", t.appPath, err, t.root) }
		if err := chartutil.ProcessDependenciesWithMerge(chrt, vals); err != nil {
			return nil, fail(err)
		}
		if !h.SkipSchemaValidation {
			coalesced, err := chartutil.CoalesceValues(chrt, vals)
			if err != nil {
				return nil, fail(err)
			}
			if err := validateValues(chrt, coalesced); err != nil {
				return nil, fail(err)
			}
		}
		top, err := chartutil.ToRenderValuesWithSchemaValidation(chrt, vals, chartutil.ReleaseOptions{
			Name: release, Namespace: namespace, Revision: 1, IsInstall: true,
		}, caps, true)
		if err != nil {
			return nil, fail(err)
		}
		rendered, err := engine.Engine{}.Render(chrt, top)
		if err != nil {
			return nil, fail(err)
		}
		failed := func(err error) error {
			for _, text := range rendered {
				t.produce([]byte(text))
			}
			return err
		}

		var out []*unstructured.Unstructured
		if !h.SkipCrds {
			for _, crd := range chrt.CRDObjects() {
				objs, err := decodeYAML(t.chartDisplay(crd.Filename), crd.File.Data)
				if err != nil {
					return nil, err
				}
				out = append(out, objs...)
			}
		}
		names := make([]string, 0, len(rendered))
		for name := range rendered {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			if path.Base(name) == "NOTES.txt" || strings.TrimSpace(rendered[name]) == "" {
				continue
			}
			objs, err := decodeYAML(t.chartDisplay(name)+" (rendered)", []byte(rendered[name]))
			if err != nil {
				return nil, failed(err)
			}
			for _, o := range objs {
				if !isHelmTestHook(o) {
					out = append(out, o)
				}
			}
		}
		return out, nil
	})
}

// chartDisplay names a file of the rendered chart ("mychart/templates/x.yaml",
// as Helm names it) by its path in the repository.
func (t *target) chartDisplay(name string) string {
	_, rest, ok := strings.Cut(name, "/")
	if !ok {
		return joinDisplay(t.appPath, name)
	}
	return joinDisplay(t.appPath, rest)
}

// isHelmTestHook reports whether o is a Helm test, which Argo CD never
// runs: a hook whose every phase is test, test-success or test-failure.
func isHelmTestHook(o *unstructured.Unstructured) bool {
	v, ok := o.GetAnnotations()[app.AnnotationHelmHook]
	if !ok {
		return false
	}
	for _, phase := range strings.Split(v, ",") {
		switch strings.ToLower(strings.TrimSpace(phase)) {
		case "test", "test-success", "test-failure":
		default:
			return false
		}
	}
	return true
}
