package render

import (
	"context"
	"errors"
	"path/filepath"

	"golang.org/x/sync/semaphore"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/openapi"

	"github.com/ferry-gitops/ferry/internal/app"
)

// kustomizeSchema guards kustomize's OpenAPI schema, package state of
// kyaml that every build sets: a build whose kustomizations have no
// openapi field leaves the default schema as it is (kyaml parses it once,
// under its own lock), so any number of those run at once, each holding
// one unit; a build with an openapi field sets a schema of its own, and
// holds every unit, so that it runs alone, and resets the schema after
// itself. A semaphore rather than a lock, so that waiting honours the
// caller's context; it is fair, so a build that sets a schema is not
// starved by the others.
var kustomizeSchema = semaphore.NewWeighted(kustomizeSchemaUnits)

const kustomizeSchemaUnits = 1 << 20

// kustomize runs kustomize build on the app directory, as Argo CD does
// (kustomize's defaults: files restricted to their kustomization's
// directory, no plugins but the built-in ones), with spec.source.kustomize
// applied to an in-memory copy of the kustomization (see
// editKustomization), on a file system that cannot leave the repository
// (see repoFS). Remote bases are refused unless the Renderer allows them,
// and then read from the checkouts the worker fetched (see
// FetchRemoteBases and scanKustomization).
func (r *Renderer) kustomize(ctx context.Context, t *target, opts *app.KustomizeSource, env map[string]string, remote []RemoteBase) ([]*unstructured.Unstructured, error) {
	limits := r.Limits.withDefaults()
	fsys, err := r.kustomizeFS(t, opts, env)
	if err != nil {
		return nil, err
	}
	scan, err := r.scanKustomization(fsys, t.dir, remote)
	if err != nil {
		return nil, r.kustomizeError(t, fsys, err)
	}
	for _, kc := range scan.charts {
		if err := r.inflateCharts(ctx, t, fsys, kc, opts); err != nil {
			return nil, err
		}
	}
	setsSchema := scan.setsSchema
	restrict := types.LoadRestrictionsRootOnly
	if r.Kustomize.LoadRestrictorNone {
		restrict = types.LoadRestrictionsNone // repoFS still keeps every read inside the repository
	}
	units := int64(1)
	if setsSchema {
		units = kustomizeSchemaUnits
	}
	if err := kustomizeSchema.Acquire(ctx, units); err != nil {
		return nil, err
	}
	return runBounded(ctx, limits, t.appPath, func(context.Context) ([]*unstructured.Unstructured, error) {
		defer kustomizeSchema.Release(units)
		if setsSchema {
			defer openapi.ResetOpenAPI()
		}
		k := krusty.MakeKustomizer(&krusty.Options{
			Reorder:          krusty.ReorderOptionNone,
			LoadRestrictions: restrict,
			PluginConfig:     types.DisabledPluginConfig(),
		})
		m, err := k.Run(fsys, t.dir)
		if err != nil {
			return nil, r.kustomizeError(t, fsys, err)
		}
		failed := func(err error) error {
			for _, res := range m.Resources() {
				if y, yerr := res.AsYAML(); yerr == nil {
					t.produce(y)
				}
			}
			return err
		}
		var out []*unstructured.Unstructured
		for _, res := range m.Resources() {
			j, err := res.MarshalJSON()
			if err != nil {
				return nil, failed(toolError("kustomize", t.appPath, err, t.root))
			}
			objs, err := toObjects(j)
			if err != nil {
				return nil, failed(&ManifestError{File: t.appPath + " (kustomize output " + res.CurId().String() + ")", Err: err})
			}
			out = append(out, objs...)
		}
		return out, nil
	})
}

// kustomizeFS is the file system a build of t reads: the repository,
// confined, with spec.source.kustomize applied to an in-memory copy of
// the kustomization. The edits come first, so that the scan sees what
// they add (components, patches).
func (r *Renderer) kustomizeFS(t *target, opts *app.KustomizeSource, env map[string]string) (*repoFS, error) {
	fsys := newRepoFS(t.root, newBudget(r.Limits.withDefaults(), t.appPath))
	fsys.decrypt = func(display string, data []byte) ([]byte, error) { return decryptFile(r.SOPS, display, data) }
	if kustomizeOptionsSet(opts) {
		file := filepath.Join(t.dir, t.kustFile)
		real, err := fsys.confine(file)
		if err != nil {
			return nil, r.kustomizeError(t, fsys, err)
		}
		data, err := fsys.ReadFile(real)
		if err != nil {
			return nil, r.kustomizeError(t, fsys, err)
		}
		exists := func(rel string) bool { return fsys.Exists(filepath.Join(t.dir, rel)) }
		edited, err := editKustomization(joinDisplay(t.appPath, t.kustFile), data, opts, kustomizeEdits{env: env, exists: exists})
		if err != nil {
			return nil, err
		}
		fsys.override(real, edited)
	}
	return fsys, nil
}

// kustomizeError explains a failed build: a path outside the repository
// (whatever kustomize made of the refusal), a limit, or kustomize's own
// message.
func (r *Renderer) kustomizeError(t *target, fsys *repoFS, err error) error {
	if esc := fsys.escaped(); esc != "" {
		return &SourceError{Path: t.appPath, Msg: "kustomize: " + esc + " is outside the repository: " +
			"a kustomization may use only files and bases inside it (symlinks included)"}
	}
	if err := fsys.limit(); err != nil {
		return err
	}
	var limit *LimitError
	var unsupported *UnsupportedError
	var source *SourceError
	var parse *ParseError
	if errors.As(err, &limit) || errors.As(err, &unsupported) || errors.As(err, &source) || errors.As(err, &parse) {
		return err
	}
	return fsys.relabel(toolError("kustomize", t.appPath, err, t.root))
}
