package chartsource

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/ferry-gitops/ferry/internal/netpolicy"
)

// Placed is a chart to fetch into a checkout, where a renderer without
// network looks for it: a chart of Kustomize's helmCharts.
type Placed struct {
	RepoURL, Name string
	// Version is a version or a constraint; "" takes the newest, as helm
	// pull does.
	Version string
	// Dir is where the chart goes, relative to the checkout's root.
	Dir string
	// Asker names who asks for it in errors and in the host policy's
	// refusals: "the helmCharts entry "redis" of app/kustomization.yaml".
	Asker string
}

// WithCharts gives the checkout root with each chart in its Dir, with the
// dependencies its Chart.yaml takes from repositories: root itself when
// there are none, else a private copy of root (hard links where the
// filesystem allows) into which they are fetched, through the host policy
// and the project's rule on repositories (netpolicy), the credentials,
// cache and limits of every chart. release removes the copy.
func (c *Charts) WithCharts(ctx context.Context, root string, charts []Placed) (string, func(), error) {
	if len(charts) == 0 {
		return root, func() {}, nil
	}
	copyRoot, release, err := c.privateCopy(root, "charts-")
	if err != nil {
		return "", nil, err
	}
	var errs []error
	for _, p := range charts {
		if err := c.place(ctx, copyRoot, p); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		release()
		return "", nil, err
	}
	return copyRoot, release, nil
}

func (c *Charts) place(ctx context.Context, root string, p Placed) error {
	if err := netpolicy.Check(ctx, c.opts.Hosts, p.Asker, p.RepoURL); err != nil {
		return err
	}
	fail := func(err error) error {
		return fmt.Errorf("%s: chart %q version %q from %s: %w", p.Asker, p.Name, p.Version, RedactURL(p.RepoURL), err)
	}
	v, err := c.Resolve(ctx, p.RepoURL, p.Name, p.Version)
	if err != nil {
		return fail(err)
	}
	data, err := c.archive(ctx, p.RepoURL, p.Name, v)
	if err != nil {
		return fail(err)
	}
	b := &budget{c: c, display: p.Asker}
	if b.bytes += int64(len(data)); b.bytes > c.opts.MaxArchiveBytes {
		return &LimitError{What: p.Asker + " is more than", Limit: c.opts.MaxArchiveBytes, Flag: c.opts.ArchiveFlag}
	}
	dir := filepath.Join(root, filepath.FromSlash(p.Dir))
	if err := b.extract(data, dir); err != nil {
		return fail(err)
	}
	return c.vendorDependencies(ctx, dir, b, 0)
}
