package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/egress"
)

// pluginStderrMax is how much of a plugin's error output an error keeps:
// its end, where the reason usually is.
const pluginStderrMax = 4 << 10

// pluginOutputMax bounds a plugin's stdout, the manifests.
const pluginOutputMax = 64 << 20

// plugin renders t with its config-management plugin as Argo CD's
// sidecars do: in a writable copy of the repository, init then generate in
// the app directory, with the plugin's environment only; generate's
// standard output is the manifest stream. It runs only where the renderer
// itself runs in a sandbox (RunPlugins).
func (r *Renderer) plugin(ctx context.Context, t *target, src app.Source, opts Options) ([]*unstructured.Unstructured, error) {
	p := t.plugin
	if !r.RunPlugins {
		return nil, &UnsupportedError{Path: t.appPath, What: "config-management plugins (" + p.FullName() + ")",
			Verb: "run only in a render sandbox", Reason: "start the worker with --render-sandbox gvisor or process"}
	}
	limits := r.Limits.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, limits.Timeout)
	defer cancel()
	work, err := os.MkdirTemp("", "ferry-plugin-")
	if err != nil {
		return nil, fmt.Errorf("render %s: plugin %s: make its working copy: %w", t.appPath, p.FullName(), err)
	}
	defer os.RemoveAll(work)
	repo := filepath.Join(work, "repo")
	if err := copyRepo(t.root, repo, p.Spec.PreserveFileMode, newBudget(limits, t.appPath)); err != nil {
		var limit *LimitError
		if errors.As(err, &limit) {
			return nil, err
		}
		// Deterministic for the commit (the copy does not fit the
		// sandbox's /tmp, a file cannot be read): not worth a retry.
		return nil, &SourceError{Path: t.appPath, Msg: fmt.Sprintf("plugin %s: copy the repository for it: %v; "+
			"the copy must fit in the render sandbox's /tmp (64 MiB): keep large files out of the repository", p.FullName(), err), Err: err}
	}
	dir := filepath.Join(repo, filepath.FromSlash(t.appPath))
	env, err := r.pluginEnv(src, opts)
	if err != nil {
		return nil, &SourceError{Path: t.appPath, Msg: err.Error()}
	}
	if r.EgressSocket != "" {
		addr, stop, err := egress.Forward(r.EgressSocket)
		if err != nil {
			return nil, fmt.Errorf("render %s: plugin %s: %w", t.appPath, p.FullName(), err)
		}
		defer stop()
		env = append(env, egress.Env(addr)...)
	}
	run := func(step string, c PluginCommand) ([]byte, error) {
		out, err := runPluginCommand(ctx, c.argv(), dir, env)
		if err == nil {
			return out, nil
		}
		if ctx.Err() != nil {
			return nil, &LimitError{Path: t.appPath, What: "render time", Limit: int64(limits.Timeout), Flag: limits.Flags.Timeout}
		}
		return nil, &ToolError{Tool: "plugin " + p.FullName(), Path: t.appPath, Msg: step + ": " + err.Error(), Err: err}
	}
	if p.Spec.Init != nil {
		if _, err := run("init", *p.Spec.Init); err != nil {
			return nil, err
		}
	}
	out, err := run("generate", p.Spec.Generate)
	if err != nil {
		return nil, err
	}
	objs, err := decodeYAML(fmt.Sprintf("%s (output of plugin %s)", t.appPath, p.FullName()), out)
	if err != nil {
		t.produce(out)
	}
	return objs, err
}

// runPluginCommand runs argv in dir with env and gives its stdout; an
// error carries the end of its stderr, Secret-looking values masked.
func runPluginCommand(ctx context.Context, argv []string, dir string, env []string) ([]byte, error) {
	name := argv[0]
	if !strings.Contains(name, "/") {
		found, err := lookPath(name, env)
		if err != nil {
			return nil, err
		}
		name = found
	}
	cmd := exec.CommandContext(ctx, name, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Dir, cmd.Env = dir, env
	// Its own process group, so that a timeout ends what it started too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	var stdout limitedBuffer
	stdout.max = pluginOutputMax
	var stderr tailBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if stdout.over {
		return nil, fmt.Errorf("wrote more than %s on stdout", bytesString(pluginOutputMax))
	}
	if err != nil {
		msg := maskSecrets(strings.TrimSpace(string(stderr.bytes())))
		if msg == "" {
			msg = "no error output"
		}
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return nil, fmt.Errorf("%s exited with status %d: %s", argv[0], exit.ExitCode(), msg)
		}
		return nil, fmt.Errorf("run %s: %v", argv[0], err)
	}
	return stdout.buf.Bytes(), nil
}

// lookPath finds a program on the plugin's PATH (not the renderer's).
func lookPath(name string, env []string) (string, error) {
	var pathVar string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathVar = v
		}
	}
	for _, d := range filepath.SplitList(pathVar) {
		p := filepath.Join(d, name)
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found in the sandbox (PATH %s): put the program in the plugin directory's bin/, or name it by its absolute path", name, pathVar)
}

// copyRepo copies the checkout at root (without .git) to dst: the
// plugin's working copy, which it may write to, as a sidecar plugin may
// write to the copy Argo CD sends it.
func copyRepo(root, dst string, preserveMode bool, b *budget) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		mode := fs.FileMode(0o644)
		if preserveMode {
			mode = info.Mode().Perm()
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case info.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case info.Mode().IsRegular():
			// Counted, not sized: any file may be in the repository, and
			// the sandbox's /tmp bounds what the copy can hold.
			if err := b.take(filepath.ToSlash(rel), 0); err != nil {
				return err
			}
			return copyFile(p, target, mode)
		}
		return nil // devices, sockets: not in a Git checkout
	})
}

func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// discover finds the plugin whose discover matches the app directory dir,
// in FullName order, as Argo CD tries its sidecars. Only plugins with a
// discover section take part. withCommands runs find.command discovery,
// which only a sandboxed renderer may do.
func (r *Renderer) discover(ctx context.Context, dir string, env []string, withCommands bool) (*Plugin, error) {
	for _, p := range r.Plugins {
		ok, err := r.matches(ctx, p, dir, env, withCommands)
		if err != nil {
			return nil, err
		}
		if ok {
			return p, nil
		}
	}
	return nil, nil
}

// matches applies p's discover to dir: fileName, else find.glob, else
// find.command (exit 0 and some output). A plugin without a discover
// section matches nothing.
func (r *Renderer) matches(ctx context.Context, p *Plugin, dir string, env []string, withCommands bool) (bool, error) {
	d := p.Spec.Discover
	switch {
	case d == nil:
		return false, nil
	case d.FileName != "":
		matches, err := filepath.Glob(filepath.Join(dir, filepath.FromSlash(path.Clean(d.FileName))))
		return len(matches) > 0, err
	case d.Find != nil && d.Find.Glob != "":
		return globTree(dir, path.Clean(filepath.ToSlash(d.Find.Glob)), r.Limits.withDefaults().MaxFiles)
	case d.Find != nil && len(d.Find.Command) > 0 && withCommands:
		argv := append(append([]string(nil), d.Find.Command...), d.Find.Args...)
		out, err := runPluginCommand(ctx, argv, dir, env)
		return err == nil && len(bytes.TrimSpace(out)) > 0, nil
	}
	return false, nil
}

// globTree reports whether any path under dir matches pattern, where **
// matches any number of directories (as Argo CD's find.glob does).
func globTree(dir, pattern string, maxFiles int) (bool, error) {
	found, seen := false, 0
	stop := errors.New("stop")
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if seen++; seen > maxFiles {
			return stop
		}
		rel, _ := filepath.Rel(dir, p)
		if rel != "." && matchDoubleStar(strings.Split(pattern, "/"), strings.Split(filepath.ToSlash(rel), "/")) {
			found = true
			return stop
		}
		return nil
	})
	if err != nil && err != stop {
		return false, err
	}
	return found, nil
}

func matchDoubleStar(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(name); i++ {
				if matchDoubleStar(pat[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// limitedBuffer keeps at most max bytes and notes that more came.
type limitedBuffer struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.buf.Len()+len(p) > b.max {
		b.over = true
		return 0, errors.New("output limit")
	}
	return b.buf.Write(p)
}

// tailBuffer keeps the last pluginStderrMax bytes written.
type tailBuffer struct{ buf []byte }

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.buf = append(b.buf, p...)
	if len(b.buf) > 2*pluginStderrMax {
		b.buf = append([]byte(nil), b.buf[len(b.buf)-pluginStderrMax:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) bytes() []byte {
	if len(b.buf) > pluginStderrMax {
		return append([]byte("…"), b.buf[len(b.buf)-pluginStderrMax:]...)
	}
	return b.buf
}
