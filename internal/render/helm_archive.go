package render

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"path"
	"strings"

	"helm.sh/helm/v3/pkg/chart/loader"
)

// checkArchives inflates the chart's archived subcharts (charts/*.tgz, as
// Helm's loader picks them out of files), and the archives inside those,
// into nothing, counting what they inflate to against the render's
// MaxArchiveBytes and their files against MaxFiles. Helm's loader holds
// every file of an archive in memory, up to 100 MiB an archive and again
// for each nested one, so a few small archives of zeros could take a
// worker's memory; they must fit before it sees them.
//
// An archive that does not inflate is left to Helm's loader, which says
// what is wrong with it.
func checkArchives(chartDisplay string, files []*loader.BufferedFile, b *budget) error {
	for _, f := range files {
		if !isSubchartArchive(f.Name) {
			continue
		}
		if err := b.inflate(joinDisplay(chartDisplay, f.Name), bytes.NewReader(f.Data)); err != nil {
			return err
		}
	}
	return nil
}

// isSubchartArchive reports whether Helm's loader takes the chart file
// name for an archived subchart: charts/<name>.tgz, <name> not starting
// with "." or "_".
func isSubchartArchive(name string) bool {
	rest, ok := strings.CutPrefix(name, "charts/")
	return ok && !strings.Contains(rest, "/") && path.Ext(rest) == ".tgz" && strings.IndexAny(rest, "_.") != 0
}

// errArchiveLimit ends an inflation that went past a limit; the budget
// holds the LimitError.
var errArchiveLimit = errors.New("archive limit")

// inflate reads the gzipped tar archive r through, the archives inside
// it too, counting against the budget.
func (b *budget) inflate(display string, r io.Reader) error {
	_ = b.inflateTar(display, r) // a broken archive: Helm's loader reports it
	return b.archiveLimit()
}

// archiveLimit is the LimitError an inflation ran into, or nil.
func (b *budget) archiveLimit() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.archiveErr == nil {
		return nil
	}
	return b.archiveErr
}

func (b *budget) inflateTar(display string, r io.Reader) error {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return err
	}
	defer zr.Close()
	tr := tar.NewReader(&archiveReader{r: zr, b: b, display: display})
	for {
		hd, err := tr.Next()
		if err != nil {
			return err // io.EOF at the end
		}
		if hd.Typeflag != tar.TypeReg {
			continue
		}
		if err := b.archivedFile(); err != nil {
			return err
		}
		// The first component is the chart's directory, as for Helm.
		_, name, _ := strings.Cut(strings.ReplaceAll(hd.Name, "\\", "/"), "/")
		if isSubchartArchive(path.Clean(name)) {
			_ = b.inflateTar(display+"/"+name, tr)
			if b.archiveLimit() != nil {
				return errArchiveLimit
			}
		}
	}
}

// archivedFile counts one file inside an archive against MaxFiles.
func (b *budget) archivedFile() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.files++; b.files > b.limits.MaxFiles {
		b.archiveErr = &LimitError{Path: b.appPath, What: "files", Limit: int64(b.limits.MaxFiles)}
		return errArchiveLimit
	}
	return nil
}

// archiveReader counts the bytes an archive inflates to against
// MaxArchiveBytes.
type archiveReader struct {
	r       io.Reader
	b       *budget
	display string
}

func (a *archiveReader) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	b := a.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.archiveBytes += int64(n); b.archiveBytes > b.limits.MaxArchiveBytes {
		b.archiveErr = &LimitError{Path: a.display, What: "archive size", Limit: b.limits.MaxArchiveBytes, Flag: b.limits.Flags.ArchiveBytes}
		return n, errArchiveLimit
	}
	return n, err
}
