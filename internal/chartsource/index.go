package chartsource

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/getter"
	"helm.sh/helm/v3/pkg/repo"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/listing"
)

// chartIndex is one listing: a Helm repository's index, or an OCI
// repository's tags as the versions of its one chart.
type chartIndex struct {
	file *repo.IndexFile
	oci  bool
}

// version is one resolved chart version and where its archive is.
type version struct {
	version string
	urls    []string // the index's; empty for OCI
	digest  string   // the index's "sha256 hex" of the archive; empty when it names none
}

// index lists repoURL (for OCI: the chart's repository in it), shared by
// every caller through the listing cache.
func (c *Charts) index(ctx context.Context, repoURL, chartName string, want listing.Want) (*chartIndex, error) {
	if err := c.opts.Hosts.CheckURL(repoURL); err != nil {
		return nil, err
	}
	if IsOCI(repoURL) {
		ref := ociRef(repoURL, chartName)
		return c.indexes.Get(ctx, "oci://"+ref, want, c.opts.RequestTimeout, func(ctx context.Context) (*chartIndex, error) {
			return c.ociTags(ctx, repoURL, chartName)
		})
	}
	return c.indexes.Get(ctx, repoKey(repoURL), want, c.opts.RequestTimeout, func(ctx context.Context) (*chartIndex, error) {
		return c.helmIndex(ctx, repoURL)
	})
}

// helmIndex fetches index.yaml with Helm's HTTP getter, conditionally.
func (c *Charts) helmIndex(ctx context.Context, repoURL string) (*chartIndex, error) {
	g, opts, err := c.httpGetter(repoURL)
	if err != nil {
		return nil, err
	}
	indexURL := strings.TrimRight(repoURL, "/") + "/index.yaml"
	c.statsFor(repoURL).index.Add(1)
	start := time.Now()
	buf, err := g.Get(indexURL, opts...)
	c.observe("helm-index", start, err)
	if err != nil {
		return nil, fmt.Errorf("fetch the repository's index.yaml: %w", redactErr(err, repoURL))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Helm's loader reads files: one per repository, replaced atomically.
	path := filepath.Join(c.indexAt, hashOf(repoKey(repoURL))+".yaml")
	tmp, err := os.CreateTemp(c.indexAt, ".index-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return nil, err
	}
	file, err := repo.LoadIndexFile(path)
	if err != nil {
		return nil, &IndexError{RepoURL: RedactURL(repoURL), Err: err}
	}
	return &chartIndex{file: file}, nil
}

// ociTags lists the chart's tags with Helm's registry client: the semver
// ones are its versions, as helm does.
func (c *Charts) ociTags(ctx context.Context, repoURL, chartName string) (*chartIndex, error) {
	client, err := c.registryClient(repoURL)
	if err != nil {
		return nil, err
	}
	ref := ociRef(repoURL, chartName)
	c.statsFor(repoURL).index.Add(1)
	start := time.Now()
	tags, err := client.Tags(ref)
	c.observe("oci-tags", start, err)
	if err != nil {
		return nil, fmt.Errorf("list the tags of oci://%s: %w", ref, redactErr(err, repoURL))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	file := repo.NewIndexFile()
	// Under the whole reference: the listing is shared by every spelling
	// of it (oci://host/a with b/c, host/a/b with c).
	for _, t := range tags {
		file.Entries[ref] = append(file.Entries[ref], &repo.ChartVersion{Metadata: &chart.Metadata{Name: chartName, Version: t}})
	}
	file.SortEntries()
	return &chartIndex{file: file, oci: true}, nil
}

// match picks the version targetRevision asks for, as helm does.
func (idx *chartIndex) match(repoURL, chartName, targetRevision string) (version, error) {
	rev := app.ChartRevision(targetRevision)
	entry := chartName
	if idx.oci {
		entry = ociRef(repoURL, chartName)
	}
	versions := idx.file.Entries[entry]
	if len(versions) == 0 {
		return version{}, &NotFoundError{RepoURL: RedactURL(repoURL), Chart: chartName, Revision: rev, NoChart: true, Charts: idx.charts()}
	}
	cv, err := idx.file.Get(entry, rev)
	if err != nil {
		var list []string
		for _, v := range versions {
			list = append(list, v.Version)
		}
		return version{}, &NotFoundError{RepoURL: RedactURL(repoURL), Chart: chartName, Revision: rev, Versions: list}
	}
	return version{version: cv.Version, urls: cv.URLs, digest: cv.Digest}, nil
}

// lookup is a Helm repository index's entry for an exact version.
func (idx *chartIndex) lookup(chartName, v string) (version, bool) {
	for _, cv := range idx.file.Entries[chartName] {
		if cv.Version == v {
			return version{version: cv.Version, urls: cv.URLs, digest: cv.Digest}, true
		}
	}
	// A version written as the index writes it, without a "v" or build.
	want, err := semver.NewVersion(v)
	if err != nil {
		return version{}, false
	}
	for _, cv := range idx.file.Entries[chartName] {
		if got, err := semver.NewVersion(cv.Version); err == nil && got.Equal(want) {
			return version{version: cv.Version, urls: cv.URLs, digest: cv.Digest}, true
		}
	}
	return version{}, false
}

func (idx *chartIndex) charts() []string {
	var out []string
	for name := range idx.file.Entries {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// NotFoundError says that a repository has no version of a chart that
// the targetRevision allows, or no such chart.
type NotFoundError struct {
	RepoURL, Chart, Revision string
	NoChart                  bool
	Charts                   []string // the repository's charts, when NoChart
	Versions                 []string // the chart's versions, newest first
}

func (e *NotFoundError) Error() string {
	if e.NoChart {
		known := "it lists none"
		if len(e.Charts) > 0 {
			known = "it lists " + strings.Join(first(e.Charts, 20), ", ")
		}
		return fmt.Sprintf("chart %q is not in %s (%s): check spec.source.chart and repoURL", e.Chart, e.RepoURL, known)
	}
	return fmt.Sprintf("chart %q of %s has no version matching %q (it has %s): publish one, or change targetRevision",
		e.Chart, e.RepoURL, e.Revision, strings.Join(first(e.Versions, 10), ", "))
}

// IndexError says that a repository's index.yaml is not one.
type IndexError struct {
	RepoURL string
	Err     error
}

func (e *IndexError) Error() string {
	return fmt.Sprintf("the index.yaml of %s is not a Helm repository index: %v", e.RepoURL, e.Err)
}

func (e *IndexError) Unwrap() error { return e.Err }

// IsNotFound reports whether err says that no chart version matches: a
// retry cannot help until one is published or the source changes.
func IsNotFound(err error) bool {
	var nf *NotFoundError
	var ie *IndexError
	return errors.As(err, &nf) || errors.As(err, &ie)
}

func first(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], "…")
	}
	return s
}

var _ getter.Getter = (*getter.HTTPGetter)(nil)
