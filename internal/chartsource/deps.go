package chartsource

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/internal/netpolicy"
)

// maxDependencyDepth bounds how deep dependencies of dependencies are
// fetched: a chart's archived dependencies normally carry their own.
const maxDependencyDepth = 5

// remoteDependencies are the dependencies of the chart in dir that its
// Chart.yaml takes from an https://, http:// or oci:// repository and that
// its charts/ does not hold, each with the version to fetch: Chart.lock's
// when it pins the dependency, else the Chart.yaml constraint.
func remoteDependencies(dir string) ([]*chart.Dependency, error) {
	md, err := chartutil.LoadChartfile(filepath.Join(dir, chartutil.ChartfileName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // not a chart: the renderer says so
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", chartutil.ChartfileName, err)
	}
	var lock chart.Lock
	if data, err := os.ReadFile(filepath.Join(dir, "Chart.lock")); err == nil {
		if err := yaml.Unmarshal(data, &lock); err != nil {
			return nil, fmt.Errorf("read Chart.lock: %w", err)
		}
	} else if data, err := os.ReadFile(filepath.Join(dir, "requirements.lock")); err == nil {
		_ = yaml.Unmarshal(data, &lock)
	}
	var out []*chart.Dependency
	for _, dep := range md.Dependencies {
		if !isRemoteRepo(dep.Repository) || vendored(dir, dep.Name) {
			continue
		}
		d := *dep
		for _, l := range lock.Dependencies {
			if l.Name == dep.Name && strings.TrimRight(l.Repository, "/") == strings.TrimRight(dep.Repository, "/") && l.Version != "" {
				d.Version = l.Version
			}
		}
		out = append(out, &d)
	}
	return out, nil
}

func isRemoteRepo(repository string) bool {
	r := strings.ToLower(strings.TrimSpace(repository))
	return strings.HasPrefix(r, "https://") || strings.HasPrefix(r, "http://") || strings.HasPrefix(r, "oci://")
}

// vendored reports whether charts/ holds the dependency already, as a
// directory or as an archive named as helm dependency build names it.
func vendored(dir, name string) bool {
	if st, err := os.Stat(filepath.Join(dir, "charts", name, chartutil.ChartfileName)); err == nil && st.Mode().IsRegular() {
		return true
	}
	archives, _ := filepath.Glob(filepath.Join(dir, "charts", name+"-*.tgz"))
	return len(archives) > 0
}

// vendorDependencies fetches the chart's remote dependencies into its
// charts/, as helm dependency build does, through the shared index and
// archive caches: a dependency's version is resolved against its
// repository's index (or tags) like a targetRevision.
func (c *Charts) vendorDependencies(ctx context.Context, dir string, b *budget, depth int) error {
	deps, err := remoteDependencies(dir)
	if err != nil || len(deps) == 0 {
		return err
	}
	if depth >= maxDependencyDepth {
		return fmt.Errorf("%s: chart dependencies nest more than %d deep", b.display, maxDependencyDepth)
	}
	if err := os.MkdirAll(filepath.Join(dir, "charts"), 0o755); err != nil {
		return err
	}
	var errs []error
	for _, dep := range deps {
		if err := c.vendorOne(ctx, dir, dep, b); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (c *Charts) vendorOne(ctx context.Context, dir string, dep *chart.Dependency, b *budget) error {
	fail := func(err error) error {
		return fmt.Errorf("%s: chart dependency %q version %q from %s: %w", b.display, dep.Name, dep.Version, RedactURL(dep.Repository), err)
	}
	asker := fmt.Sprintf("the Chart.yaml dependency %q of %s", dep.Name, b.display)
	if err := netpolicy.Check(ctx, c.opts.Hosts, asker, dep.Repository); err != nil {
		return err
	}
	v, err := c.Resolve(ctx, dep.Repository, dep.Name, dep.Version)
	if err != nil {
		return fail(err)
	}
	data, err := c.archive(ctx, dep.Repository, dep.Name, v)
	if err != nil {
		return fail(err)
	}
	if b.bytes += int64(len(data)); b.bytes > c.opts.MaxArchiveBytes {
		return &LimitError{What: b.display + " and its dependencies add up to more than", Limit: c.opts.MaxArchiveBytes, Flag: c.opts.ArchiveFlag}
	}
	return os.WriteFile(filepath.Join(dir, "charts", fmt.Sprintf("%s-%s.tgz", dep.Name, v)), data, 0o644)
}

// WithDependencies gives the repository tree root, in which chartPath is a
// chart, with the chart's remote dependencies in its charts/: root itself
// when it needs none, else a private copy of root (hard links where the
// filesystem allows) into which they are fetched. release removes the copy.
func (c *Charts) WithDependencies(ctx context.Context, root, chartPath string) (string, func(), error) {
	noop := func() {}
	dir := filepath.Join(root, filepath.FromSlash(chartPath))
	deps, err := remoteDependencies(dir)
	if err != nil || len(deps) == 0 {
		return root, noop, nil // a broken Chart.yaml is the renderer's to report
	}
	copyRoot, release, err := c.privateCopy(root, "deps-")
	if err != nil {
		return "", nil, err
	}
	b := &budget{c: c, display: "chart " + chartPath}
	if err := c.vendorDependencies(ctx, filepath.Join(copyRoot, filepath.FromSlash(chartPath)), b, 0); err != nil {
		release()
		return "", nil, err
	}
	return copyRoot, release, nil
}

// privateCopy is a copy of the tree root to fetch charts into (hard links
// where the filesystem allows); release removes it.
func (c *Charts) privateCopy(root, prefix string) (string, func(), error) {
	copyRoot, err := newTree(c.treesAt, prefix)
	if err != nil {
		return "", nil, err
	}
	release := func() { _ = os.RemoveAll(copyRoot) }
	if err := linkTree(root, copyRoot); err != nil {
		release()
		return "", nil, fmt.Errorf("copy the checkout to fetch charts into: %w", err)
	}
	return copyRoot, release, nil
}

// linkTree recreates the tree src under dst: directories made, files hard
// linked (copied when linking fails), symlinks kept as they are.
func linkTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			if rel == ".git" {
				return filepath.SkipDir
			}
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.Type().IsRegular():
			if os.Link(p, target) == nil {
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, 0o644)
		}
		return nil
	})
}
