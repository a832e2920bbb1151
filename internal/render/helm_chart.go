package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/ignore"
)

// loadChart reads the chart in the real directory dir (inside the
// repository) into memory and builds it with Helm's loader. Ferry reads the
// files itself rather than letting Helm walk the directory, because
// Helm's walk follows symlinks wherever they lead: here a symlink must stay
// inside the repository, every file counts against the render's limits,
// and .helmignore applies as for helm.
//
// Dependencies must be in the chart's charts/ directory, as directories or
// archives (what helm dependency build leaves), or be file:// dependencies
// inside the repository, which are loaded from there; nothing is
// downloaded.
func loadChart(ctx context.Context, root, dir string, b *budget, depth int) (*chart.Chart, error) {
	display := displayPath(root, dir)
	if depth > 10 {
		return nil, &SourceError{Path: display, Msg: "file:// chart dependencies nest more than 10 deep"}
	}
	files, err := chartFiles(ctx, root, dir, b)
	if err != nil {
		return nil, err
	}
	if err := checkArchives(display, files, b); err != nil {
		return nil, err
	}
	c, err := loader.LoadFiles(files)
	if err != nil {
		return nil, toolError("helm", display, fmt.Errorf("load chart: %w", err), root)
	}
	if err := resolveDependencies(ctx, root, dir, c, b, depth); err != nil {
		return nil, err
	}
	return c, nil
}

// chartFiles lists a chart directory's files as Helm's loader takes them.
// The walk stops when ctx ends: symlinks to directories can make a tree
// with few files take very long to walk.
func chartFiles(ctx context.Context, root, dir string, b *budget) ([]*loader.BufferedFile, error) {
	rules := ignore.Empty()
	if ifile := filepath.Join(dir, ignore.HelmIgnore); isFile(osFiles{}, ifile) {
		real, display, err := resolveInRepo(root, dir, ignore.HelmIgnore, ".helmignore")
		if err != nil {
			return nil, err
		}
		data, err := b.readFile(real, display)
		if err != nil {
			return nil, err
		}
		if rules, err = ignore.Parse(bytes.NewReader(data)); err != nil {
			return nil, &ParseError{File: display, Line: 1, Msg: err.Error(), Err: err}
		}
	}
	rules.AddDefaults()

	var files []*loader.BufferedFile
	visiting := map[string]bool{}
	var walk func(realDir, rel string) error
	walk = func(realDir, rel string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if visiting[realDir] {
			return &SourceError{Path: displayPath(root, realDir), Msg: "symlinks form a loop"}
		}
		visiting[realDir] = true
		defer delete(visiting, realDir)
		entries, err := os.ReadDir(realDir)
		if err != nil {
			return err
		}
		for _, e := range entries { // sorted by name: a deterministic chart
			name := path.Join(rel, e.Name())
			if e.Name() == ".git" {
				continue
			}
			real, display, err := resolveInRepo(root, realDir, e.Name(), "chart file")
			if err != nil {
				return err
			}
			info, err := os.Stat(real)
			if err != nil {
				return err
			}
			if rules.Ignore(name, info) {
				continue
			}
			switch {
			case info.IsDir():
				if err := walk(real, name); err != nil {
					return err
				}
			case info.Mode().IsRegular():
				data, err := b.readFile(real, display)
				if err != nil {
					return err
				}
				data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
				files = append(files, &loader.BufferedFile{Name: name, Data: data})
			default:
				return &SourceError{Path: display, Msg: "not a regular file"}
			}
		}
		return nil
	}
	if err := walk(dir, ""); err != nil {
		return nil, err
	}
	return files, nil
}

// resolveDependencies checks that every dependency Chart.yaml declares is
// there, loading file:// ones from the repository, recursively.
func resolveDependencies(ctx context.Context, root, dir string, c *chart.Chart, b *budget, depth int) error {
	display := displayPath(root, dir)
	for _, dep := range c.Metadata.Dependencies {
		if hasSubchart(c, dep.Name) {
			continue
		}
		repo := strings.TrimSpace(dep.Repository)
		if rel, ok := strings.CutPrefix(repo, "file://"); ok && dir != "" {
			real, _, err := resolveInRepo(root, dir, rel, fmt.Sprintf("dependency %q (repository %s)", dep.Name, repo))
			if err != nil {
				return err
			}
			sub, err := loadChart(ctx, root, real, b, depth+1)
			if err != nil {
				return err
			}
			if sub.Name() != dep.Name {
				return &SourceError{Path: display, Msg: fmt.Sprintf("dependency %q: %s holds chart %q", dep.Name, repo, sub.Name())}
			}
			if err := checkVersion(dep, sub); err != nil {
				return &SourceError{Path: display, Msg: err.Error()}
			}
			c.AddDependency(sub)
			continue
		}
		lock := ""
		if c.Lock != nil {
			lock = " (Chart.lock pins it)"
		}
		from := "from " + repo
		if repo == "" {
			from = "with no repository"
		}
		return &SourceError{Path: display, Msg: fmt.Sprintf(
			"chart dependency %q %s %s is not in charts/%s: Ferry renders only what is in Git and does not download dependencies; "+
				"vendor them: run `helm dependency build` in the chart and commit its charts/ directory",
			dep.Name, dep.Version, from, lock)}
	}
	for _, sub := range c.Dependencies() {
		if err := resolveDependencies(ctx, root, "", sub, b, depth+1); err != nil {
			return err
		}
	}
	return nil
}

func hasSubchart(c *chart.Chart, name string) bool {
	return slices.ContainsFunc(c.Dependencies(), func(d *chart.Chart) bool { return d.Name() == name })
}

func checkVersion(dep *chart.Dependency, sub *chart.Chart) error {
	if dep.Version == "" {
		return nil
	}
	constraint, err := semver.NewConstraint(dep.Version)
	if err != nil {
		return fmt.Errorf("dependency %q: version %q: %w", dep.Name, dep.Version, err)
	}
	v, err := semver.NewVersion(sub.Metadata.Version)
	if err != nil {
		return fmt.Errorf("dependency %q: chart version %q: %w", dep.Name, sub.Metadata.Version, err)
	}
	if !constraint.Check(v) {
		return errors.New(fmt.Sprintf("dependency %q: %s has version %s, Chart.yaml asks for %s", dep.Name, dep.Repository, v, dep.Version))
	}
	return nil
}
