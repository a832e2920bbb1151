package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// chromium is Debian's Chromium on PATH (hack/deps.sh installs it for the
// browser tests), or an error that says it is missing.
func chromium() (string, error) {
	path, err := exec.LookPath("chromium")
	if err != nil {
		return "", fmt.Errorf("no chromium on PATH (Debian's chromium; hack/deps.sh test installs it): %w", err)
	}
	return path, nil
}

// uiBrowser is one headless Chromium, logged in to the server; each tab is
// a chromedp context of its own.
type uiBrowser struct {
	ctx    context.Context // the first tab, which started the browser
	server string
	cancel func()
}

// newUIBrowser starts Chromium, trusting the server's self-signed
// certificate as the browser tests do, on cpus alone when given (taskset
// -c). Its first tab stays open.
func newUIBrowser(ctx context.Context, path, server, cpus string) (*uiBrowser, error) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.Flag("ignore-certificate-errors", true), chromedp.WindowSize(1400, 1000))
	if cpus != "" {
		taskset, err := exec.LookPath("taskset")
		if err != nil {
			return nil, fmt.Errorf("-ui-browser-cpus: %w", err)
		}
		opts = append(opts, chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) {
			cmd.Args = append([]string{"taskset", "-c", cpus, cmd.Path}, cmd.Args[1:]...)
			cmd.Path = taskset
		}))
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.WithoutCancel(ctx), opts...)
	tctx, cancelTab := chromedp.NewContext(actx)
	b := &uiBrowser{ctx: tctx, server: server, cancel: func() { cancelTab(); cancelAlloc() }}
	if err := chromedp.Do(tctx); err != nil {
		b.cancel()
		return nil, fmt.Errorf("start Chromium: %w", err)
	}
	return b, nil
}

// tab opens another tab of the browser, with want's marks (see benchScript).
func (b *uiBrowser) tab(want uiWant) (*uiTab, error) {
	ctx, cancel := chromedp.NewContext(b.ctx)
	t := &uiTab{ctx: ctx, cancel: cancel, server: b.server}
	return t, t.install(want)
}

// login logs the browser in as a user, as the login form does: POST
// /api/v1/session from the page, whose answer sets the session cookie.
func (b *uiBrowser) login(user, password string) error {
	t := &uiTab{ctx: b.ctx, server: b.server}
	if err := t.do(time.Minute, chromedp.Navigate(b.server+"/login")); err != nil {
		return err
	}
	body, _ := json.Marshal(map[string]string{"username": user, "password": password})
	js := fmt.Sprintf(`fetch('/api/v1/session', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: %q}).then((r) => r.status)`, body)
	status, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](js, chromedp.EvalAwaitPromise))
	if err != nil || status != 200 {
		return fmt.Errorf("log in as %s: status %d: %v", user, status, err)
	}
	return nil
}

// count answers a number the page computes from its API: the nodes of a
// resource tree, say.
func (b *uiBrowser) count(js string) (int, error) {
	return chromedp.Run(b.ctx, chromedp.Evaluate[int](js, chromedp.EvalAwaitPromise))
}

func (b *uiBrowser) close() { b.cancel() }

// uiWant is what benchScript marks the time of: Tiles app tiles in the
// DOM while the page's title counts Total apps ("1000 of 1000"), TreeItems
// items of resource trees.
type uiWant struct {
	Tiles     int `json:"tiles"`
	Total     int `json:"total"`
	TreeItems int `json:"treeitems"`
}

// benchScript runs in every document of a tab before its own scripts
// (Page.addScriptToEvaluateOnNewDocument). A MutationObserver on the
// document checks, after each batch of DOM changes, whether the page holds
// the wanted tiles (and its title counts every app) or tree items, and marks performance.now() the first
// time (milliseconds since the navigation started: the document's time
// origin); and whether a watched element shows a text, marking Date.now()
// (the machine's clock, as Temporal's event times). A PerformanceObserver
// keeps the longest main-thread task (the 'longtask' entries, 50 ms and
// over) while a probe runs; the probe is a timer due every 50 ms that
// records how late it ran: the wait an input arriving then would have had.
const benchScript = `(() => {
  const want = %s;
  const b = window.__bench = { marks: {}, watch: null, probing: false, longest: 0, longCount: 0, lag: 0 };
  try {
    new PerformanceObserver((list) => {
      if (!b.probing) return;
      for (const e of list.getEntries()) { b.longest = Math.max(b.longest, e.duration); b.longCount++; }
    }).observe({ type: 'longtask' });
  } catch (e) { b.noLongtask = String(e); }
  // The stream of changes (EventSource): its messages counted, one an app
  // at first, then one a change.
  const ES = window.EventSource;
  if (ES) window.EventSource = class extends ES { constructor(...a) { super(...a); this.addEventListener('message', () => { b.events = (b.events || 0) + 1; }); } };
  const first = (name, n) => { if (n > 0 && b.marks[name + 'First'] === undefined) { b.marks[name + 'First'] = performance.now(); b.marks[name + 'FirstCount'] = n; } };
  const check = () => {
    if (want.tiles) first('tiles', document.getElementsByClassName('tile').length);
    if (want.treeitems) first('tree', document.querySelectorAll('[role=treeitem]').length);
    const counted = () => { const c = document.querySelector('section[aria-label=Applications] h1 small'); return c && c.textContent === want.total + ' of ' + want.total; };
    if (want.tiles && b.marks.tiles === undefined && document.getElementsByClassName('tile').length >= want.tiles && counted()) b.marks.tiles = performance.now();
    if (want.treeitems && b.marks.tree === undefined && document.querySelectorAll('[role=treeitem]').length >= want.treeitems) b.marks.tree = performance.now();
    const w = b.watch;
    if (w && w.at === undefined) { const el = document.querySelector(w.sel); if (el && el.textContent.trim() === w.text) w.at = Date.now(); }
  };
  b.check = check;
  new MutationObserver(check).observe(document, { childList: true, subtree: true, characterData: true, attributes: true });
  b.startProbe = () => {
    Object.assign(b, { probing: true, longest: 0, longCount: 0, lag: 0 });
    let due = performance.now() + 50;
    const tick = () => { const now = performance.now(); b.lag = Math.max(b.lag, now - due); due = now + 50; b.timer = setTimeout(tick, 50); };
    b.timer = setTimeout(tick, 50);
  };
  b.stopProbe = () => { b.probing = false; clearTimeout(b.timer); return { longest: b.longest, longCount: b.longCount, lag: b.lag }; };
})()`

// uiTab is one tab of the browser.
type uiTab struct {
	ctx    context.Context
	cancel func()
	server string
}

func (t *uiTab) install(want uiWant) error {
	w, _ := json.Marshal(want)
	_, err := chromedp.Call(t.ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: fmt.Sprintf(benchScript, w)})
	return err
}

func (t *uiTab) close() {
	if t.cancel != nil {
		t.cancel()
	}
}

// do runs actions within timeout.
func (t *uiTab) do(timeout time.Duration, actions ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(t.ctx, timeout)
	defer cancel()
	return chromedp.Do(ctx, actions...)
}

// open navigates to the server's path (a blank page first, so that every
// run starts from a new document).
func (t *uiTab) open(path string) error {
	return t.do(time.Minute, chromedp.Navigate("about:blank"), chromedp.Navigate(t.server+path))
}

// blank leaves the tab's page for about:blank, closing its stream.
func (t *uiTab) blank() error {
	return t.do(time.Minute, chromedp.Navigate("about:blank"))
}

// eval evaluates js in the tab and decodes its value into out.
func (t *uiTab) eval(js string, out any) error {
	// A page whose main thread is busy answers late: wait as long.
	ctx, cancel := context.WithTimeout(t.ctx, 3*time.Minute)
	defer cancel()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](js))
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}

// wait evaluates js, a number that is -1 until what it waits for
// happened, until it is not -1 or timeout passes; say is an expression of
// what the page holds, for the error.
func (t *uiTab) wait(what, js, say string, timeout time.Duration) (float64, error) {
	deadline := time.Now().Add(timeout)
	for {
		var v float64
		err := t.eval(js, &v)
		if err == nil && v != -1 {
			return v, nil
		}
		if time.Now().After(deadline) || t.ctx.Err() != nil {
			var shows any
			_ = t.eval(say, &shows)
			return 0, fmt.Errorf("%s: not within %s (%v); the page holds %v", what, timeout, err, shows)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// mark waits for a mark of benchScript (tiles, tree) and answers it in
// seconds since the navigation started.
func (t *uiTab) mark(name string, timeout time.Duration) (float64, error) {
	js := fmt.Sprintf(`(window.__bench && window.__bench.marks[%q] !== undefined) ? window.__bench.marks[%[1]q] : -1`, name)
	say := `({tiles: document.getElementsByClassName('tile').length, treeitems: document.querySelectorAll('[role=treeitem]').length, text: document.body ? document.body.innerText.slice(0, 300) : ''})`
	ms, err := t.wait("the page's "+name, js, say, timeout)
	return ms / 1000, err
}

// streamed waits until the page's stream of changes has brought n
// messages (its first, one an app) and answers when it had, in seconds
// since the navigation started.
func (t *uiTab) streamed(n int, timeout time.Duration) (float64, error) {
	js := fmt.Sprintf(`(window.__bench.events || 0) >= %d ? performance.now() : -1`, n)
	ms, err := t.wait(fmt.Sprintf("%d messages of the stream", n), js, `window.__bench.events || 0`, timeout)
	return ms / 1000, err
}

// firstShown answers when the page first held any of what mark name
// waits for (seconds since the navigation started) and how many.
func (t *uiTab) firstShown(name string) (at float64, count int, err error) {
	var m struct {
		At    float64 `json:"at"`
		Count int     `json:"count"`
	}
	err = t.eval(fmt.Sprintf(`({at: window.__bench.marks[%q] || 0, count: window.__bench.marks[%q] || 0})`, name+"First", name+"FirstCount"), &m)
	return m.At / 1000, m.Count, err
}

// fetches are the page's requests whose URL holds part, as the resource
// timing entries say: when each started and when its answer ended, in
// seconds since the navigation started.
func (t *uiTab) fetches(part string) (string, error) {
	var spans [][2]float64
	err := t.eval(fmt.Sprintf(`performance.getEntriesByType('resource').filter((e) => e.name.includes(%q)).map((e) => [e.startTime, e.responseEnd])`, part), &spans)
	var out []string
	for _, sp := range spans {
		out = append(out, fmt.Sprintf("%s–%s s", num(sp[0]/1000), num(sp[1]/1000)))
	}
	return strings.Join(out, ", "), err
}

// settle waits until the page's main thread answers an evaluation within
// 100 ms three times in a row, and answers when it first did, in seconds
// since the navigation started (the page's clock).
func (t *uiTab) settle(timeout time.Duration) (float64, error) {
	quick := 0
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); {
		began := time.Now()
		var now float64
		if err := t.eval(`performance.now()`, &now); err != nil {
			return 0, err
		}
		if time.Since(began) < 100*time.Millisecond {
			quick++
		} else {
			quick = 0
		}
		if quick == 3 {
			return now / 1000, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return 0, fmt.Errorf("the page's main thread still busy after %s", timeout)
}

// watch has the page mark the moment the element sel shows text.
func (t *uiTab) watch(sel, text string) error {
	var ok bool
	return t.eval(fmt.Sprintf(`(window.__bench.watch = {sel: %q, text: %q}, window.__bench.check(), true)`, sel, text), &ok)
}

// watched waits for the watch's moment, as the machine's clock.
func (t *uiTab) watched(timeout time.Duration) (time.Time, error) {
	js := `(window.__bench.watch && window.__bench.watch.at !== undefined) ? window.__bench.watch.at : -1`
	say := `(() => { const w = window.__bench.watch; const el = w && document.querySelector(w.sel); return el ? el.textContent : 'no ' + (w && w.sel); })()`
	ms, err := t.wait("the watched status", js, say, timeout)
	return time.UnixMilli(int64(ms)), err
}

// probe is what the responsiveness probe saw: the longest long task and
// how many there were, and the timer's longest lateness, in ms.
type probe struct {
	Longest   float64 `json:"longest"`
	LongCount int     `json:"longCount"`
	Lag       float64 `json:"lag"`
	cut       bool    // the window ended before the fleet synced
	idle      float64 // the empty page's timer's longest delay
}

// idleProbe has a tab leave its page for an empty document of another
// origin (a process of its own) and run the same 50 ms timer there: how
// late it runs is the machine's share of a page's delay, the page's own
// work not counted. stop ends it and answers its longest delay in ms.
func (t *uiTab) idleProbe() (stop func() (float64, error), err error) {
	if err := t.do(time.Minute, chromedp.Navigate("data:text/html,<title>idle</title>")); err != nil {
		return nil, err
	}
	var ok bool
	err = t.eval(`(() => { const b = window.__idle = { lag: 0 }; let due = performance.now() + 50;
	  const tick = () => { const now = performance.now(); b.lag = Math.max(b.lag, now - due); due = now + 50; b.timer = setTimeout(tick, 50); };
	  b.timer = setTimeout(tick, 50); return true; })()`, &ok)
	return func() (float64, error) {
		var lag float64
		return lag, t.eval(`(clearTimeout(window.__idle.timer), window.__idle.lag)`, &lag)
	}, err
}

func (t *uiTab) startProbe() error {
	var ok bool
	return t.eval(`(window.__bench.startProbe(), true)`, &ok)
}

func (t *uiTab) stopProbe() (probe, error) {
	var p probe
	return p, t.eval(`window.__bench.stopProbe()`, &p)
}
