package appset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/gobwas/glob"
	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/internal/app"
)

// Tree is one commit of a repository, as the git generators read it.
type Tree interface {
	// Dirs are its directories, slash-separated from the root, hidden
	// ones (.git, .github) left out.
	Dirs() []string
	// Files are its files, slash-separated from the root.
	Files() []string
	ReadFile(name string) ([]byte, error)
}

// Source reads repositories for the git generators.
type Source interface {
	Tree(ctx context.Context, repoURL, revision string) (Tree, error)
}

// Cluster is a destination the clusters generator yields: a region.
type Cluster struct {
	Name        string            `json:"name"`
	Server      string            `json:"server,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Options is what generation needs from outside.
type Options struct {
	Source   Source
	Clusters []Cluster
	// SCM reaches the providers of the pullRequest and scmProvider
	// generators; nil: they fail, saying the control worker runs them.
	SCM SCM
	// Control reads the control namespace for the clusterDecisionResource
	// and plugin generators; nil: there is none, and they fail saying so.
	Control Control
	// Validate checks each generated Application as `ferry app apply` would.
	Validate app.ValidateOptions
}

// Result is the outcome of one generation.
type Result struct {
	// Apps are the valid generated Applications, in generator order.
	Apps []app.Application
	// Invalid names each generated app that is not valid, with why; the set
	// neither creates, updates nor deletes while any is.
	Invalid []string
}

// ErrGenerate wraps a generation that failed as a whole: a generator or a
// template could not run.
var ErrGenerate = errors.New("generate the applications")

// Generate runs the set's generators and renders its template with every
// parameter set.
func Generate(ctx context.Context, s *ApplicationSet, opts Options) (*Result, error) {
	g := &generation{set: s, r: s.renderer(), opts: opts}
	res := &Result{}
	seen := map[string]bool{}
	for i, gen := range s.Spec.Generators {
		p := fmt.Sprintf("spec.generators[%d]", i)
		params, err := g.run(ctx, gen, p, nil)
		if err != nil {
			return nil, fmt.Errorf("applicationset %q: %w: %s: %w", s.Metadata.Name, ErrGenerate, p, err)
		}
		tmpl, err := fillTemplate(gen.template(), s.Spec.Template)
		if err != nil {
			return nil, err
		}
		for _, ps := range params {
			a, err := s.renderApp(tmpl, ps, opts.Validate)
			if a == nil || (err != nil && !app.IsValidationError(err)) {
				return nil, fmt.Errorf("applicationset %q: %w: %s: template: %w", s.Metadata.Name, ErrGenerate, p, err)
			}
			if err != nil {
				res.Invalid = append(res.Invalid, err.Error())
				continue
			}
			if seen[a.Metadata.Name] {
				return nil, fmt.Errorf("applicationset %q: %w: two parameter sets generate app %q: make the template's name unique, such as with the path or cluster in it",
					s.Metadata.Name, ErrGenerate, a.Metadata.Name)
			}
			seen[a.Metadata.Name] = true
			if s.RollingSync() {
				disableAutoSync(a)
			}
			res.Apps = append(res.Apps, *a)
		}
	}
	return res, nil
}

type generation struct {
	set  *ApplicationSet
	r    renderer
	opts Options
}

// run yields one generator's parameter sets, filtered by its selector.
func (g *generation) run(ctx context.Context, gen Generator, p string, _ Params) ([]Params, error) {
	var out []Params
	var err error
	switch {
	case gen.List != nil:
		out, err = g.r.listParams(gen.List, p)
	case gen.Clusters != nil:
		out, err = g.clusters(gen.Clusters)
	case gen.Git != nil:
		out, err = g.git(ctx, gen.Git, p)
	case gen.Matrix != nil:
		out, err = g.matrix(ctx, gen.Matrix, p)
	case gen.Merge != nil:
		out, err = g.merge(ctx, gen.Merge, p)
	case gen.PullRequest != nil:
		out, err = g.pullRequest(ctx, gen.PullRequest, p)
	case gen.SCMProvider != nil:
		out, err = g.scmProvider(ctx, gen.SCMProvider, p)
	case gen.ClusterDecisionResource != nil:
		out, err = g.duckType(ctx, gen.ClusterDecisionResource, p)
	case gen.Plugin != nil:
		out, err = g.plugin(ctx, gen.Plugin, p)
	default:
		return nil, fmt.Errorf("%s: no generator", p)
	}
	if err != nil || gen.Selector == nil {
		return out, err
	}
	var kept []Params
	for _, ps := range out {
		if gen.Selector.Matches(Flatten(ps)) {
			kept = append(kept, ps)
		}
	}
	return kept, nil
}

const clusterSecretTypeLabel = "argocd.argoproj.io/secret-type"

// clusters yields one parameter set per region its selector matches.
func (g *generation) clusters(c *ClustersGenerator) ([]Params, error) {
	var out []Params
	for _, cl := range g.opts.Clusters {
		// Every cluster of Argo CD carries its Secret's type label.
		labels := maps.Clone(cl.Labels)
		if labels == nil {
			labels = map[string]string{}
		}
		labels[clusterSecretTypeLabel] = "cluster"
		if !c.Selector.Matches(labels) {
			continue
		}
		p := Params{}
		if g.r.goTemplate {
			p["name"], p["nameNormalized"], p["server"] = cl.Name, SanitizeName(cl.Name), cl.Server
			p["metadata"] = map[string]any{"labels": stringMap(cl.Labels), "annotations": stringMap(cl.Annotations)}
		} else {
			p["name"], p["nameNormalized"], p["server"] = cl.Name, SanitizeName(cl.Name), cl.Server
			for k, v := range cl.Labels {
				p["metadata.labels."+k] = v
			}
			for k, v := range cl.Annotations {
				p["metadata.annotations."+k] = v
			}
		}
		p, err := g.r.withValues(p, c.Values)
		if err != nil {
			return nil, fmt.Errorf("clusters: %w", err)
		}
		out = append(out, p)
	}
	return out, nil
}

func stringMap(m map[string]string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// git yields one parameter set per matching directory, or per matching
// file (per item, when the file holds a list).
func (g *generation) git(ctx context.Context, gg *GitGenerator, p string) ([]Params, error) {
	if g.opts.Source == nil {
		return nil, fmt.Errorf("%s.git: no Git source to read %s from", p, gg.RepoURL)
	}
	tree, err := g.opts.Source.Tree(ctx, gg.RepoURL, gg.Revision)
	if err != nil {
		return nil, fmt.Errorf("%s.git: %w", p, err)
	}
	var out []Params
	if len(gg.Directories) > 0 {
		dirs, err := matchPaths(tree.Dirs(), gg.Directories, false)
		if err != nil {
			return nil, fmt.Errorf("%s.git.directories: %w", p, err)
		}
		for _, d := range dirs {
			ps := Params{}
			g.r.pathParams(ps, d, "", gg.PathParamPrefix)
			if ps, err = g.r.withValues(ps, gg.Values); err != nil {
				return nil, fmt.Errorf("%s.git: %w", p, err)
			}
			out = append(out, ps)
		}
		return out, nil
	}
	files, err := matchPaths(tree.Files(), gg.Files, true)
	if err != nil {
		return nil, fmt.Errorf("%s.git.files: %w", p, err)
	}
	for _, f := range files {
		data, err := tree.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("%s.git.files: read %s: %w", p, f, err)
		}
		items, err := fileItems(data)
		if err != nil {
			return nil, fmt.Errorf("%s.git.files: %s: %w", p, f, err)
		}
		for _, item := range items {
			ps := g.r.objectParams(item)
			g.r.pathParams(ps, path.Dir(f), path.Base(f), gg.PathParamPrefix)
			if ps, err = g.r.withValues(ps, gg.Values); err != nil {
				return nil, fmt.Errorf("%s.git: %w", p, err)
			}
			out = append(out, ps)
		}
	}
	return out, nil
}

// fileItems reads a git files generator's file: one YAML or JSON object,
// or a list of them.
func fileItems(data []byte) ([]map[string]any, error) {
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("not YAML or JSON: %w", err)
	}
	var v any
	if err := json.Unmarshal(j, &v); err != nil {
		return nil, err
	}
	switch t := v.(type) {
	case map[string]any:
		return []map[string]any{t}, nil
	case []any:
		var out []map[string]any
		for i, x := range t {
			m, ok := x.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("item %d is not an object", i)
			}
			out = append(out, m)
		}
		return out, nil
	case nil:
		return nil, nil
	}
	return nil, errors.New("holds neither an object nor a list of objects")
}

// matchPaths keeps the paths that an included pattern matches and no
// excluded one does. Directories match as Argo CD's path.Match ('*' within
// one segment); files with '**' across segments too.
func matchPaths(all []string, patterns []GitPath, files bool) ([]string, error) {
	type matcher struct {
		match   func(string) bool
		exclude bool
	}
	var ms []matcher
	for _, gp := range patterns {
		pattern := strings.TrimPrefix(gp.Path, "/")
		if files {
			gl, err := glob.Compile(pattern, '/')
			if err != nil {
				return nil, fmt.Errorf("bad glob %q: %w", gp.Path, err)
			}
			ms = append(ms, matcher{gl.Match, gp.Exclude})
			continue
		}
		if _, err := path.Match(pattern, ""); err != nil {
			return nil, fmt.Errorf("bad pattern %q: %w", gp.Path, err)
		}
		ms = append(ms, matcher{func(s string) bool { ok, _ := path.Match(pattern, s); return ok }, gp.Exclude})
	}
	var out []string
	for _, p := range all {
		include, exclude := false, false
		for _, m := range ms {
			if m.match(p) {
				if m.exclude {
					exclude = true
				} else {
					include = true
				}
			}
		}
		if include && !exclude {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out, nil
}
