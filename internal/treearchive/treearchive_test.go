package treearchive

import (
	"archive/tar"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuilderKeepsWholeTreesOnly: an archive within the bounds is kept
// and holds what was added; one past MaxFiles or MaxBytes, one with a
// file shorter than its size, and one discarded are removed.
func TestBuilderKeepsWholeTreesOnly(t *testing.T) {
	dir := t.TempDir()
	build := func(name string, fn func(b *Builder)) string {
		t.Helper()
		p := filepath.Join(dir, name+".tar")
		b, err := NewBuilder(p)
		if err != nil {
			t.Fatal(err)
		}
		fn(b)
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		return p
	}
	kept := build("kept", func(b *Builder) {
		b.Add("app", fs.ModeDir, 0, "")
		_, _ = io.WriteString(b.Add("app/cm.yaml", 0o644, 5, ""), "kind\n")
		b.Add("link", fs.ModeSymlink, 0, "app/cm.yaml")
	})
	f, err := os.Open(kept)
	if err != nil {
		t.Fatalf("the archive of a tree within the bounds is not kept: %v", err)
	}
	defer f.Close()
	var got []string
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		got = append(got, h.Name+" "+string(rune(h.Typeflag))+" "+h.Linkname+strings.TrimSpace(string(body)))
	}
	if want := []string{"app 5 ", "app/cm.yaml 0 kind", "link 2 app/cm.yaml"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("the archive holds %q, want %q", got, want)
	}

	max := MaxFiles
	t.Cleanup(func() { MaxFiles = max })
	MaxFiles = 2
	for name, fn := range map[string]func(b *Builder){
		"too many": func(b *Builder) {
			b.Add("a", fs.ModeDir, 0, "")
			b.Add("a/b", fs.ModeDir, 0, "")
			b.Add("a/c", fs.ModeDir, 0, "")
		},
		"too large": func(b *Builder) {
			w := b.Add("big", 0o644, MaxBytes+1, "")
			_, _ = w.Write(make([]byte, 1<<20))
		},
		"short": func(b *Builder) {
			_, _ = io.WriteString(b.Add("short", 0o644, 10, ""), "kind\n")
		},
	} {
		if _, err := os.Stat(build(name, fn)); !os.IsNotExist(err) {
			t.Errorf("%s: the archive is kept (%v)", name, err)
		}
	}
	p := filepath.Join(dir, "discarded.tar")
	b, err := NewBuilder(p)
	if err != nil {
		t.Fatal(err)
	}
	b.Add("a", fs.ModeDir, 0, "")
	if err := b.Discard(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("a discarded archive is kept (%v)", err)
	}
}
