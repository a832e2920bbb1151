package chartsource

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/repo"

	"github.com/ferry-gitops/ferry/internal/listing"
	"github.com/ferry-gitops/ferry/internal/netpolicy"
)

// Checkout writes version of chartName from repoURL into a new directory:
// root/<chartName> holds the chart, with the dependencies its Chart.yaml
// takes from https:// and oci:// repositories in its charts/. release
// removes the directory.
func (c *Charts) Checkout(ctx context.Context, repoURL, chartName, v string) (root string, release func(), err error) {
	data, err := c.archive(ctx, repoURL, chartName, v)
	if err != nil {
		return "", nil, err
	}
	root, err = newTree(c.treesAt, "chart-")
	if err != nil {
		return "", nil, err
	}
	release = func() { _ = os.RemoveAll(root) }
	b := &budget{c: c, display: fmt.Sprintf("chart %s %s", chartName, v)}
	if err := b.extract(data, filepath.Join(root, chartName)); err != nil {
		release()
		return "", nil, fmt.Errorf("check out chart %q %s of %s: %w", chartName, v, RedactURL(repoURL), err)
	}
	if err := c.vendorDependencies(ctx, filepath.Join(root, chartName), b, 0); err != nil {
		release()
		return "", nil, err
	}
	return root, release, nil
}

// archive returns the packaged chart: from CacheDir/archives when a copy
// with the right content is there, else from the repository.
func (c *Charts) archive(ctx context.Context, repoURL, chartName, v string) ([]byte, error) {
	fail := func(err error) error {
		return fmt.Errorf("fetch chart %q %s of %s: %w", chartName, v, RedactURL(repoURL), err)
	}
	if IsOCI(repoURL) {
		return c.ociArchive(ctx, repoURL, chartName, v)
	}
	// The version was resolved from a listing: any listing that has it
	// names its archive, however old, so that rendering what a resolve
	// chose costs no second index request. One that lacks the version
	// (published since), or whose digest the archive does not match
	// (replaced under the same version), is listed again.
	for _, want := range []listing.Want{{MaxAge: anyAge}, {Force: true}} {
		idx, err := c.index(ctx, repoURL, chartName, want)
		if err != nil {
			return nil, fail(err)
		}
		cv, ok := idx.lookup(chartName, v)
		if !ok {
			if want.Force {
				_, err := idx.match(repoURL, chartName, v)
				return nil, err
			}
			continue
		}
		data, err := c.fetchArchive(ctx, repoURL, chartName, v, cv)
		if errors.Is(err, errDigestMismatch) && !want.Force {
			continue
		}
		if err != nil {
			return nil, fail(err)
		}
		return data, nil
	}
	return nil, fail(errors.New("no listing names it")) // not reached: the forced listing returns
}

// anyAge takes whatever listing the cache holds.
const anyAge = time.Duration(math.MaxInt64)

var errDigestMismatch = errors.New("the archive does not match the index's digest")

// fetchArchive returns the archive the index names for cv: the cached
// copy, or a download checked against the index's digest.
func (c *Charts) fetchArchive(ctx context.Context, repoURL, chartName, v string, cv version) ([]byte, error) {
	if len(cv.urls) == 0 {
		return nil, fmt.Errorf("the index lists no URL for it")
	}
	key := hashOf(repoKey(repoURL), chartName, cv.version, cv.digest)
	if data, ok := c.cached(key, cv.digest); ok {
		return data, nil
	}
	chartURL, err := repo.ResolveReferenceURL(repoURL, cv.urls[0])
	if err != nil {
		return nil, err
	}
	if err := c.checkArchiveURL(ctx, repoURL, chartName, v, chartURL); err != nil {
		return nil, err
	}
	g, opts, err := c.httpGetter(repoURL)
	if err != nil {
		return nil, err
	}
	c.statsFor(repoURL).archive.Add(1)
	start := time.Now()
	buf, err := g.Get(chartURL, opts...)
	c.observe("helm-chart", start, err)
	if err != nil {
		return nil, redactErr(err, repoURL)
	}
	data := buf.Bytes()
	if err := c.checkSize(chartName, v, int64(len(data))); err != nil {
		return nil, err
	}
	if cv.digest != "" && sha256Hex(data) != strings.TrimPrefix(cv.digest, "sha256:") {
		return nil, fmt.Errorf("%w (sha256:%s, the index says %s): the repository changed it under the same version, or it was corrupted on the way",
			errDigestMismatch, sha256Hex(data), cv.digest)
	}
	c.store(key, data)
	return data, nil
}

// checkArchiveURL checks the archive URL an index.yaml entry names: the
// host policy always, and the app's project when the URL is outside the
// repository (an index may send the worker anywhere).
func (c *Charts) checkArchiveURL(ctx context.Context, repoURL, chartName, v, chartURL string) error {
	asker := fmt.Sprintf("the index.yaml entry of chart %q %s in %s", chartName, v, RedactURL(repoURL))
	if err := c.opts.Hosts.CheckURL(chartURL); err != nil {
		return &netpolicy.DeniedError{URL: RedactURL(chartURL), Asker: asker, Err: err}
	}
	if within(repoURL, chartURL) {
		return nil
	}
	return netpolicy.Check(ctx, nil, asker, chartURL)
}

// within reports whether u is under the repository base: same scheme,
// host and port, and a path below the repository's.
func within(base, u string) bool {
	b, err1 := url.Parse(base)
	p, err2 := url.Parse(u)
	if err1 != nil || err2 != nil {
		return false
	}
	if !strings.EqualFold(b.Scheme, p.Scheme) || !strings.EqualFold(b.Host, p.Host) {
		return false
	}
	dir := strings.TrimSuffix(b.EscapedPath(), "/") + "/"
	return strings.HasPrefix(p.EscapedPath(), dir) && !strings.Contains(p.EscapedPath(), "/../")
}

// ociArchive resolves the tag to its manifest digest and pulls by that
// digest, once per digest.
func (c *Charts) ociArchive(ctx context.Context, repoURL, chartName, v string) ([]byte, error) {
	ref := ociRef(repoURL, chartName)
	fail := func(err error) error {
		return fmt.Errorf("pull chart oci://%s:%s: %w", ref, v, redactErr(err, repoURL))
	}
	if err := c.opts.Hosts.CheckURL(repoURL); err != nil {
		return nil, fail(err)
	}
	client, err := c.registryClient(repoURL)
	if err != nil {
		return nil, fail(err)
	}
	tag := strings.ReplaceAll(v, "+", "_") // as helm push writes it
	start := time.Now()
	desc, err := client.Resolve(ref + ":" + tag)
	c.observe("oci-resolve", start, err)
	if err != nil {
		return nil, fail(err)
	}
	digest := desc.Digest.String()
	key := hashOf(repoKey(repoURL), chartName, v, digest)
	if data, ok := c.cached(key, ""); ok {
		return data, nil
	}
	c.statsFor(repoURL).archive.Add(1)
	start = time.Now()
	res, err := client.Pull(ref + "@" + digest)
	c.observe("oci-pull", start, err)
	if err != nil {
		return nil, fail(err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := c.checkSize(chartName, v, int64(len(res.Chart.Data))); err != nil {
		return nil, err
	}
	c.store(key, res.Chart.Data)
	return res.Chart.Data, nil
}

func (c *Charts) checkSize(chartName, v string, n int64) error {
	if n > c.opts.MaxArchiveBytes {
		return &LimitError{What: fmt.Sprintf("chart %q %s is a %d-byte archive, more than", chartName, v, n), Limit: c.opts.MaxArchiveBytes, Flag: c.opts.ArchiveFlag}
	}
	return nil
}

// cached reads an archive of CacheDir/archives, checking it against the
// checksum stored beside it (and the index's digest, when given); a copy
// that fails is removed and fetched again.
func (c *Charts) cached(key, digest string) ([]byte, bool) {
	p := filepath.Join(c.archivesAt, key+".tgz")
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, false
	}
	sum, err := os.ReadFile(p + ".sha256")
	got := sha256Hex(data)
	if err != nil || strings.TrimSpace(string(sum)) != got || (digest != "" && strings.TrimPrefix(digest, "sha256:") != got) {
		c.log.Warn("chart cache: archive does not match its checksum, fetching it again", "file", p)
		_ = os.Remove(p)
		_ = os.Remove(p + ".sha256")
		return nil, false
	}
	now := time.Now()
	_ = os.Chtimes(p, now, now)
	return data, true
}

// store writes an archive and its checksum, then evicts the least
// recently used archives beyond MaxArchives. A failure only costs a
// fetch next time.
func (c *Charts) store(key string, data []byte) {
	c.archiveMu.Lock()
	defer c.archiveMu.Unlock()
	p := filepath.Join(c.archivesAt, key+".tgz")
	if err := writeAtomic(p+".sha256", []byte(sha256Hex(data)+"\n")); err != nil {
		c.log.Warn("chart cache: store archive", "err", err)
		return
	}
	if err := writeAtomic(p, data); err != nil {
		c.log.Warn("chart cache: store archive", "err", err)
		return
	}
	files, _ := filepath.Glob(filepath.Join(c.archivesAt, "*.tgz"))
	if len(files) <= c.opts.MaxArchives {
		return
	}
	type aged struct {
		path string
		mod  time.Time
	}
	var all []aged
	for _, f := range files {
		if st, err := os.Stat(f); err == nil {
			all = append(all, aged{f, st.ModTime()})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].mod.Before(all[j].mod) })
	for _, a := range all[:max(0, len(all)-c.opts.MaxArchives)] {
		_ = os.Remove(a.path)
		_ = os.Remove(a.path + ".sha256")
	}
}

func writeAtomic(p string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(p), ".part-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), p)
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// budget counts what one checkout inflates, the chart and its
// dependencies together, against the render sandbox's limits.
type budget struct {
	c       *Charts
	display string
	bytes   int64
	files   int
}

// extract writes the archive's files under dir, dropping the archive's
// top directory (<chart>/ in a packaged chart): regular files and
// directories only, every path inside dir.
func (b *budget) extract(data []byte, dir string) error {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("not a gzipped chart archive: %w", err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	for {
		hd, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read the chart archive: %w", err)
		}
		if hd.Typeflag != tar.TypeReg && hd.Typeflag != tar.TypeDir {
			continue
		}
		name := path.Clean(strings.ReplaceAll(hd.Name, `\`, "/"))
		_, rest, ok := strings.Cut(name, "/")
		if !ok || rest == "" {
			continue // the top directory itself, or a stray file beside it
		}
		if path.IsAbs(rest) || rest == ".." || strings.HasPrefix(rest, "../") {
			return fmt.Errorf("the chart archive holds %q, outside its directory", hd.Name)
		}
		target := filepath.Join(dir, filepath.FromSlash(rest))
		if hd.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
			continue
		}
		if b.files++; b.files > b.c.opts.MaxFiles {
			return &LimitError{What: b.display + " holds more files than", Limit: int64(b.c.opts.MaxFiles), Files: true}
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		left := b.c.opts.MaxArchiveBytes - b.bytes
		n, err := io.Copy(f, io.LimitReader(tr, left+1))
		cerr := f.Close()
		b.bytes += n
		if b.bytes > b.c.opts.MaxArchiveBytes {
			return &LimitError{What: b.display + " inflates to more than", Limit: b.c.opts.MaxArchiveBytes, Flag: b.c.opts.ArchiveFlag}
		}
		if err = errors.Join(err, cerr); err != nil {
			return err
		}
	}
}

// newTree makes a directory for a checkout that the render sandbox, which
// runs as another user, can read (MkdirTemp's are the owner's alone).
func newTree(dir, prefix string) (string, error) {
	root, err := os.MkdirTemp(dir, prefix)
	if err != nil {
		return "", err
	}
	if err := os.Chmod(root, 0o755); err != nil {
		_ = os.RemoveAll(root)
		return "", err
	}
	return root, nil
}
