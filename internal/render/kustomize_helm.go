package render

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/types"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/internal/app"
)

// kustCharts are the helmCharts of one kustomization, to inflate.
type kustCharts struct {
	dir, file, display string // the kustomization's directory and file (real paths), and its name for errors
	globals            *types.HelmGlobals
	charts             []types.HelmChart
}

// KustomizeChartDir is where kustomize looks for the chart of a helmCharts
// entry of the kustomization in dir, and so where the worker puts the
// chart it fetches: the chart home (helmGlobals.chartHome, "charts" by
// default, relative to the kustomization) and the chart's name, under
// <name>-<version> when the entry names a repository and a version.
func KustomizeChartDir(dir string, globals *types.HelmGlobals, c types.HelmChart) string {
	home := types.HelmDefaultHome
	if globals != nil && globals.ChartHome != "" {
		home = globals.ChartHome
	}
	d := filepath.Join(dir, filepath.FromSlash(home))
	if c.Version != "" && c.Repo != "" {
		d = filepath.Join(d, c.Name+"-"+c.Version)
	}
	return filepath.Join(d, c.Name)
}

// inflateCharts stands in for kustomize's Helm chart generator, which runs
// the helm binary: each chart of kc is rendered with Ferry's Helm (the
// render's limits, no network: a chart of a repository is the one the
// worker fetched into the chart home) into a resource file of its own in
// fsys, which the kustomization, rewritten in memory, lists in place of
// helmCharts and helmGlobals. Kustomize's transformers then apply as to
// its generator's output; like it, the objects carry kustomize's
// helm-generated mark, so that its namespace leaves them to Helm.
func (r *Renderer) inflateCharts(ctx context.Context, t *target, fsys *repoFS, kc kustCharts, opts *app.KustomizeSource) error {
	var files []string
	for i, c := range kc.charts {
		if opts != nil { // spec.source.kustomize's, as Argo CD passes them to kustomize
			c.KubeVersion = cmp.Or(c.KubeVersion, opts.KubeVersion)
			if len(c.ApiVersions) == 0 {
				c.ApiVersions = opts.APIVersions
			}
		}
		objs, err := r.inflateChart(ctx, t, fsys, kc, c)
		if err != nil {
			return err
		}
		var b bytes.Buffer
		for _, o := range objs {
			ann := o.GetAnnotations()
			if ann == nil {
				ann = map[string]string{}
			}
			ann[konfig.HelmGeneratedAnnotation] = "true"
			o.SetAnnotations(ann)
			y, err := yaml.Marshal(o.Object)
			if err != nil {
				return fmt.Errorf("%s: helmCharts %q: %w", kc.display, c.Name, err)
			}
			b.WriteString("---\n")
			b.Write(y)
		}
		if b.Len() == 0 {
			continue
		}
		name := fmt.Sprintf(".ferry-helm-chart-%d-%s.yaml", i, c.Name)
		fsys.override(filepath.Join(kc.dir, name), b.Bytes())
		files = append(files, name)
	}
	data, err := fsys.ReadFile(kc.file)
	if err != nil {
		return err
	}
	edited, err := replaceHelmCharts(kc.display, data, files)
	if err != nil {
		return err
	}
	fsys.override(kc.file, edited)
	return nil
}

// inflateChart renders one helmCharts entry as helm template does for
// kustomize: values from valuesFile (the chart's own values.yaml by
// default) and valuesInline as valuesMerge says, then
// additionalValuesFiles; the release name (the chart's name when none is
// given: kustomize's generated name would change at every render) and
// namespace ("default" when none is given, as for helm template); CRDs
// only with includeCRDs; hooks left out with skipHooks.
func (r *Renderer) inflateChart(ctx context.Context, t *target, fsys *repoFS, kc kustCharts, c types.HelmChart) ([]*unstructured.Unstructured, error) {
	field := fmt.Sprintf("helmCharts %q", c.Name)
	fail := func(format string, args ...any) error {
		return &SourceError{Path: kc.display, Msg: field + ": " + fmt.Sprintf(format, args...)}
	}
	switch {
	case c.Name == "":
		return nil, &SourceError{Path: kc.display, Msg: "helmCharts: an entry has no name: give the chart's name"}
	case !chartNameOK(c.Name):
		return nil, fail("the name is not a chart's name (one path element, no ..): give the chart's name alone")
	case c.NameTemplate != "":
		return nil, fail("nameTemplate is not supported: give a releaseName")
	case kc.globals != nil && filepath.IsAbs(kc.globals.ChartHome):
		return nil, fail("helmGlobals.chartHome %q is absolute: give a path relative to the kustomization", kc.globals.ChartHome)
	}
	dir, err := fsys.confine(KustomizeChartDir(kc.dir, kc.globals, c))
	if err != nil || !fsys.IsDir(dir) {
		where := fsys.display(KustomizeChartDir(kc.dir, kc.globals, c))
		if c.Repo == "" {
			return nil, fail("no chart at %s: give its repo, or commit the chart there", where)
		}
		return nil, fail("no chart at %s: the worker did not fetch it (it fetches the charts of the app's own kustomizations, not of remote bases): commit the chart there", where)
	}
	readFile := func(name string) (map[string]any, error) {
		p, err := fsys.confine(filepath.Join(kc.dir, filepath.FromSlash(name)))
		if err != nil {
			return nil, fail("values file %q is outside the repository", name)
		}
		data, err := fsys.ReadFile(p)
		if err != nil {
			return nil, fail("read values file %q: %v", name, err)
		}
		return readValues(fsys.display(p), data)
	}
	vals := map[string]any{}
	if c.ValuesFile != "" {
		if vals, err = readFile(c.ValuesFile); err != nil {
			return nil, err
		}
	}
	inline := map[string]any(c.ValuesInline)
	if inline == nil {
		inline = map[string]any{}
	}
	switch c.ValuesMerge {
	case "", "override":
		vals = mergeValues(vals, inline)
	case "merge":
		vals = mergeValues(inline, vals)
	case "replace":
		if len(c.ValuesInline) > 0 {
			vals = inline
		}
	default:
		return nil, fail("valuesMerge %q: give merge, override or replace", c.ValuesMerge)
	}
	for _, f := range c.AdditionalValuesFiles {
		more, err := readFile(f)
		if err != nil {
			return nil, err
		}
		vals = mergeValues(vals, more)
	}
	h := &app.HelmSource{ReleaseName: cmp.Or(c.ReleaseName, c.Name), Namespace: cmp.Or(c.Namespace, "default"), ValuesObject: vals,
		SkipCrds: !c.IncludeCRDs, KubeVersion: c.KubeVersion, APIVersions: c.ApiVersions}
	ct := &target{root: t.root, appPath: displayPath(t.root, dir), dir: dir, typ: SourceTypeHelm}
	objs, err := r.helm(ctx, ct, h, Options{}, nil)
	if err != nil {
		return nil, err
	}
	if c.SkipHooks {
		kept := objs[:0]
		for _, o := range objs {
			if _, hook := o.GetAnnotations()[app.AnnotationHelmHook]; !hook {
				kept = append(kept, o)
			}
		}
		objs = kept
	}
	return objs, nil
}

// replaceHelmCharts takes helmCharts and helmGlobals (field names in any
// case, as kustomize reads them) out of a kustomization and adds files to
// its resources.
func replaceHelmCharts(display string, data []byte, files []string) ([]byte, error) {
	doc, err := kyaml.Parse(string(data))
	if err != nil {
		return nil, yamlError(display, yamlDoc{index: 1, line: 1}, err)
	}
	var kept []*kyaml.Node
	var resources *kyaml.Node
	fields := doc.YNode().Content
	for i := 0; i+1 < len(fields); i += 2 {
		switch strings.ToLower(fields[i].Value) {
		case "helmcharts", "helmglobals":
			continue
		case "resources":
			resources = fields[i+1]
		}
		kept = append(kept, fields[i], fields[i+1])
	}
	if resources == nil && len(files) > 0 {
		resources = &kyaml.Node{Kind: kyaml.SequenceNode}
		kept = append(kept, &kyaml.Node{Kind: kyaml.ScalarNode, Value: "resources"}, resources)
	}
	for _, f := range files {
		resources.Content = append(resources.Content, &kyaml.Node{Kind: kyaml.ScalarNode, Value: f, Style: kyaml.DoubleQuotedStyle, Tag: kyaml.NodeTagString})
	}
	doc.YNode().Content = kept
	out, err := doc.String()
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", display, err)
	}
	return []byte(out), nil
}

// KustomizeChart is a chart a kustomization's helmCharts names from a
// repository and that the checkout does not hold: the worker fetches it
// into Dir before the render (which has no network) inflates it.
type KustomizeChart struct {
	RepoURL, Name, Version string
	// Dir is where the render looks for it, relative to the checkout's
	// root (KustomizeChartDir), slash-separated.
	Dir string
	// Kustomization names the kustomization that asks for it.
	Kustomization string
}

// KustomizeCharts lists the charts of repositories that the
// kustomizations reachable from path in the checkout at root name in
// helmCharts, for the worker to fetch. It refuses nothing: what is wrong
// with the kustomizations, the render says.
func KustomizeCharts(root, path string) []KustomizeChart {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil
	}
	_, dir, err := resolveAppPath(osFiles{}, real, path)
	if err != nil {
		return nil
	}
	fsys := newRepoFS(real, newBudget(DefaultLimits().withDefaults(), path))
	s := &kustScan{fs: fsys, enableHelm: true, listOnly: true, seen: map[string]bool{}}
	_ = s.dir(dir)
	var out []KustomizeChart
	for _, kc := range s.charts {
		if kc.globals != nil && filepath.IsAbs(kc.globals.ChartHome) {
			continue
		}
		for _, c := range kc.charts {
			dir := KustomizeChartDir(kc.dir, kc.globals, c)
			rel, err := filepath.Rel(real, dir)
			if c.Repo == "" || !chartNameOK(c.Name) || err != nil || !filepath.IsLocal(rel) || fsys.IsDir(dir) {
				continue
			}
			out = append(out, KustomizeChart{RepoURL: c.Repo, Name: c.Name, Version: c.Version, Dir: filepath.ToSlash(rel), Kustomization: kc.display})
		}
	}
	return out
}

// chartNameOK: a chart's name is one path element, so that the chart
// home and the file of its inflated objects stay where kustomize puts them.
func chartNameOK(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, `/\`)
}
