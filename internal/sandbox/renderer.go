package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/egress"
	"github.com/ferry-gitops/ferry/internal/render"
	"github.com/ferry-gitops/ferry/internal/treearchive"
)

// Paths inside a render's sandbox.
const (
	// CheckoutDir is where a render sees its checkout: a tmpfs of the
	// sandbox's own into which the renderer unpacks the checkout the
	// worker sends (archive.go).
	CheckoutDir = "/src"
	// linkedDir is where a checkout too large to send is mounted instead,
	// read-only, and rendered from.
	linkedDir = "/ferry/checkout"
	// PluginDir is where the worker's --plugin-dir is mounted when it has
	// plugins; its bin/ is first on the plugins' PATH.
	PluginDir = "/ferry/plugins"
	// RemoteDir holds the checkouts of a render's remote Kustomize bases,
	// which the worker fetched: RemoteDir/0, RemoteDir/1, … read-only.
	RemoteDir = "/ferry/remote"
	// binaryPath is where the renderer's executable is mounted.
	binaryPath = "/ferry/ferry-worker"
)

// RenderArg is the argument that puts the worker's binary in its render
// mode (Serve): ferry-worker render.
const RenderArg = "render"

// timeoutGrace is how long past its render timeout a sandbox may run
// before it is killed: the renderer gives up itself at the timeout, the
// grace covers the sandbox's start.
const timeoutGrace = 10 * time.Second

// Renderer renders sources in a sandbox: each render runs Binary in its
// render mode (Serve) in a fresh sandbox of Runner, which sees only the
// checkout: a copy of its own at CheckoutDir, sent with the request, or
// the checkout mounted read-only when it is too large to send. It renders exactly as Settings
// would in-process, and has the same Version, so that cached sets mean the
// same output whichever renderer made them.
type Renderer struct {
	// Runner makes the sandboxes. Required.
	Runner Runner
	// Binary is the host path of an executable that serves Serve when run
	// as "Binary render": ferry-render, or the worker's own
	// (RendererBinary). Required.
	Binary string
	// Settings are the worker's rendering settings (limits, Helm
	// capabilities, remote bases); nil means the zero render.Renderer.
	Settings *render.Renderer
	// Limits bound each sandbox; Limits.Memory is the memory of one render.
	Limits Limits
	// MemoryFlag names the setting that raises Limits.Memory in errors,
	// e.g. "--render-memory".
	MemoryFlag string
	// PluginDir is the host directory of Settings.Plugins, mounted
	// read-only at PluginDir; "" mounts none.
	PluginDir string
	// Pool is how many sandboxes are kept started, the renderer in them
	// waiting for its request, so that a render does not pay a sandbox's
	// start; 0 starts each sandbox at its render. See pool.go.
	Pool int
	// Reuse is how many renders of one checkout a sandbox of the pool may
	// serve, one after another (renderer_reuse.go); 0 or 1: one each.
	Reuse int
	// reuseIdle replaces reuseIdle in tests that count the sandboxes that
	// wait, whatever the machine's load makes a render take;
	// checkoutRenders replaces perCheckout's bound.
	reuseIdle       time.Duration
	checkoutRenders int
	// PoolDir is the host directory that holds a directory per pooled
	// sandbox, mounted read-only in it, into which a checkout too large to
	// send is hard-linked at the render: best on the file system of the
	// checkouts (else they are copied). "" is os.TempDir().
	PoolDir string
	// State, when set, is the worker's state directory, released by Close
	// after the pool.
	State *State
	// Egress are the operator's egress lists of plugins: a render of a
	// plugin that has one gets a sandbox of its own with the socket of an
	// egress proxy started for it (egress.go); nil: plugins reach nothing.
	Egress *egress.Rules

	mu       sync.Mutex
	pool     *pool[*slot]
	shares   sharing
	destroys sync.WaitGroup // of the sandboxes started for one render
	renders  renders        // under way, which Close ends
	counts   counters
}

// Version is Settings' Version: the sandbox does not change the output.
func (r *Renderer) Version() string { return r.settings().Version() }

// SourceType is Settings' SourceType: it only looks at which files exist.
func (r *Renderer) SourceType(root string, src app.Source) (string, error) {
	return r.settings().SourceType(root, src)
}

// Render renders src from the checkout at root in a sandbox. Errors are
// render's typed errors as the renderer gave them; a sandbox that ran out
// of memory or time is a *render.LimitError; a sandbox that could not run
// is an error that is not a user's. No error shows a secret value of the
// checkout: the renderer masks those it met (render.Renderer.Render), and
// every error is masked again here with those the checkout holds
// (render.Renderer.MaskError), for what the sandbox adds (its error
// output, a crashed renderer's last lines).
func (r *Renderer) Render(ctx context.Context, root string, src app.Source, opts render.Options) (*render.Result, error) {
	ctx, end, err := r.renders.begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("render %s: %w", displayAppPath(src.Path), err)
	}
	defer end()
	res, err := r.render(ctx, root, src, opts)
	if err != nil && errors.Is(context.Cause(ctx), ErrClosed) {
		return nil, fmt.Errorf("render %s: %w", displayAppPath(src.Path), ErrClosed)
	}
	if err != nil {
		return nil, r.settings().MaskError(root, src, opts, err)
	}
	return res, nil
}

func (r *Renderer) render(ctx context.Context, root string, src app.Source, opts render.Options) (_ *render.Result, err error) {
	appPath := displayAppPath(src.Path)
	real, err := filepath.Abs(root)
	if err == nil {
		real, err = filepath.EvalSymlinks(real)
	}
	if err != nil {
		return nil, fmt.Errorf("render %s: %w", appPath, err)
	}
	settings := r.settings()
	timeout := renderTimeout(settings.Limits)
	limits := r.limits()
	remote, opts := remoteMounts(opts)
	proxy, egressMounts, err := r.startEgress(real, src)
	if err != nil {
		return nil, err
	}
	if proxy != nil {
		defer proxy.Close()
		// What it refused is what a failed render's plugin could not reach.
		defer func() { err = egress.Explain(err, proxy) }()
		remote = append(remote, egressMounts...)
	}
	rctx, cancel := context.WithTimeout(ctx, timeout+timeoutGrace)
	defer cancel()
	req := request{
		Source: src, Options: opts,
		Limits: settings.Limits, Capabilities: settings.Capabilities, AllowRemoteBases: settings.AllowRemoteBases,
		Kustomize: settings.Kustomize,
		Plugins:   settings.Plugins, Memory: limits.Memory,
	}
	if proxy != nil {
		req.EgressSocket = EgressDir + "/" + egress.SocketName
	}
	if typ, err := settings.SourceType(real, src); settings.SOPS != nil && err == nil && typ != render.SourceTypePlugin {
		// A plugin decrypts nothing of Ferry's, and runs commands Ferry
		// does not know.
		req.SOPSAgeKeys = settings.SOPS.Identities()
	}
	res, done, err := r.renderIn(rctx, real, req, limits, remote)
	if err == nil && res.ExitCode == 0 && !res.OutOfMemory && !res.StdoutOverflow {
		out, err := decodeResponse(appPath, res.Stdout)
		done(err == nil)
		return out, err
	}
	done(false)
	switch {
	case err != nil && ctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded):
		return nil, &render.LimitError{Path: appPath, What: "render time", Limit: int64(timeout)}
	case err != nil:
		return nil, fmt.Errorf("render %s in the %s sandbox: %w", appPath, r.Runner.Mode(), err)
	case res.OutOfMemory:
		return nil, &render.LimitError{Path: appPath, What: "memory", Limit: limits.Memory, Flag: r.MemoryFlag}
	case res.ExitCode == 128+int(syscall.SIGXCPU):
		return nil, &render.LimitError{Path: appPath, What: "render time", Limit: int64(timeout)}
	case res.StdoutOverflow:
		return nil, &render.LimitError{Path: appPath, What: "output size", Limit: limits.Stdout}
	}
	return nil, fmt.Errorf("render %s: the renderer in the %s sandbox exited with status %d: %s", appPath, r.Runner.Mode(), res.ExitCode, lastLines(res.Stderr))
}

// renderIn runs req in a sandbox: one that rendered the same checkout and
// waits, else one of the pool or started for it, with the checkout sent
// or mounted. done, called with whether the render succeeded, ends the
// sandbox's part in it.
func (r *Renderer) renderIn(ctx context.Context, real string, req request, limits Limits, remote []Mount) (res *Result, done func(ok bool), err error) {
	done = func(bool) {}
	share := r.reusable(real, req, remote)
	if share {
		leave, err := r.enterCheckout(ctx, real)
		if err != nil {
			return nil, done, err
		}
		// Whatever this returns, its done leaves the checkout after the
		// sandbox's part ended (keepShared).
		defer func() {
			end := done
			done = func(ok bool) { end(ok); leave() }
		}()
		if s := r.takeShared(real); s != nil {
			r.counts.reused.Add(1)
			res, err := r.askShared(ctx, s, req)
			return res, func(ok bool) { r.keepShared(s, ok) }, err
		}
	}
	plan, err := planCheckout(real)
	if err != nil {
		return nil, done, err
	}
	req.Root = linkedDir
	if plan.send {
		req.Root, req.Archive = CheckoutDir, true
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, done, fmt.Errorf("encode the request: %w", err)
	}
	in, err := newCheckoutInput(append(body, '\n'), real, plan)
	if err != nil {
		return nil, done, err
	}
	if len(remote) > 0 {
		// A pooled sandbox was started with only its checkout mounted
		// (remote bases and an egress proxy need more).
		res, err = r.run(ctx, in, limits, remote...)
		return res, done, err
	}
	p := r.warmPool()
	if p == nil {
		res, err = r.run(ctx, in, limits)
		return res, done, err
	}
	var key string
	if share {
		key = real
	}
	return r.runPooled(ctx, p, in, req.Root, key)
}

// FetchRemoteBases is Settings': the worker reads the kustomizations and
// fetches their remote bases itself, outside the sandbox, which has no
// network; Render mounts the checkouts read-only at RemoteDir.
func (r *Renderer) FetchRemoteBases(ctx context.Context, root string, src app.Source, opts render.Options, fetch render.FetchFunc) ([]render.RemoteBase, error) {
	return r.settings().FetchRemoteBases(ctx, root, src, opts, fetch)
}

// remoteMounts mounts the checkouts of opts' remote bases at RemoteDir
// and gives opts naming them there.
func remoteMounts(opts render.Options) ([]Mount, render.Options) {
	if len(opts.RemoteBases) == 0 {
		return nil, opts
	}
	mounts := make([]Mount, len(opts.RemoteBases))
	bases := make([]render.RemoteBase, len(opts.RemoteBases))
	for i, b := range opts.RemoteBases {
		if real, err := filepath.EvalSymlinks(b.Dir); err == nil {
			b.Dir = real
		}
		target := fmt.Sprintf("%s/%d", RemoteDir, i)
		mounts[i] = Mount{Source: b.Dir, Target: target}
		b.Dir = target
		bases[i] = b
	}
	opts.RemoteBases = bases
	return mounts, opts
}

// Probe runs an empty request through a sandbox: an error says the
// sandbox does not work on this machine, and why.
func (r *Renderer) Probe(ctx context.Context) error {
	ctx, end, err := r.renders.begin(ctx)
	if err != nil {
		return err
	}
	defer end()
	body, _ := json.Marshal(request{Root: CheckoutDir, Probe: true})
	res, err := r.run(ctx, &checkoutInput{data: append(body, '\n')}, r.Limits.withDefaults())
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("the renderer exited with status %d: %s", res.ExitCode, lastLines(res.Stderr))
	}
	var resp response
	if err := json.Unmarshal(res.Stdout, &resp); err != nil {
		return fmt.Errorf("the renderer's answer does not parse: %w", err)
	}
	return nil
}

// limits are the Limits of each of r's sandboxes.
func (r *Renderer) limits() Limits {
	l := r.Limits
	if l.CPUTime <= 0 {
		// Go renders on every core: twice the wall time, as a second line
		// behind the timeout.
		l.CPUTime = 2 * (renderTimeout(r.settings().Limits) + timeoutGrace)
	}
	return l.withDefaults()
}

// run renders in a sandbox started for the render, which mounts the
// checkout when in does not send it.
func (r *Renderer) run(ctx context.Context, in *checkoutInput, limits Limits, extra ...Mount) (*Result, error) {
	if r.Runner == nil || r.Binary == "" {
		return nil, errors.New("sandbox.Renderer needs a Runner and a Binary")
	}
	checkout := ""
	if in.root != "" && !in.archive {
		checkout = in.root
	}
	spec := r.spec(checkout, limits)
	spec.Mounts = append(spec.Mounts, extra...)
	starter, ok := r.Runner.(Starter)
	if !ok {
		spec.Stdin = in.data
		return r.Runner.Run(ctx, spec)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	sb, err := starter.Start(spec)
	if err != nil {
		return nil, err
	}
	r.counts.started.Add(1)
	// The sandbox ends after the answer, in the background (Close waits
	// for it): the render does not wait for it.
	defer r.discard(sb)
	return sb.Finish(ctx, in)
}

// discard destroys a sandbox that served its render in the background;
// Close waits for it.
func (r *Renderer) discard(sb Sandbox) {
	r.destroys.Add(1)
	go func() {
		defer r.destroys.Done()
		sb.Destroy()
	}()
}

// spec is the sandbox of a render: a tmpfs at CheckoutDir for the
// checkout sent with the request, and checkout, when not "", mounted at
// linkedDir.
func (r *Renderer) spec(checkout string, limits Limits) Spec {
	mounts, path := SystemMounts(), "/usr/bin:/bin"
	if len(r.settings().Plugins) > 0 {
		mounts, path = r.pluginMounts()
	}
	mounts = append(mounts, Mount{Source: r.Binary, Target: binaryPath})
	if checkout != "" {
		mounts = append(mounts, Mount{Source: checkout, Target: linkedDir})
	}
	return Spec{
		Args:    []string{binaryPath, RenderArg},
		Env:     []string{"PATH=" + path, "HOME=/tmp", "TMPDIR=/tmp"},
		Dir:     "/tmp",
		Mounts:  mounts,
		Scratch: []Scratch{{Target: CheckoutDir, Size: treearchive.MaxBytes}},
		Limits:  limits,
		// Serve's answer is one line of JSON.
		AnswerLine: true,
	}
}

func (r *Renderer) settings() *render.Renderer {
	if r.Settings != nil {
		return r.Settings
	}
	return &render.Renderer{}
}
