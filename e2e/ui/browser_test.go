package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// browser is one Chromium tab, headless, that takes the server's and
// Dex's self-signed certificates as one told to trust them does.
type browser struct {
	t   *testing.T
	ctx context.Context
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	path, err := exec.LookPath("chromium")
	require.NoError(t, err, "Debian's chromium (hack/deps.sh test installs it)")
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.Flag("ignore-certificate-errors", true), chromedp.WindowSize(1400, 1000))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	require.NoError(t, chromedp.Do(ctx), "start Chromium")
	return &browser{t: t, ctx: ctx}
}

// run runs actions, failing the test on an error; each call has a minute.
func (b *browser) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	require.NoError(b.t, chromedp.Do(ctx, actions...), what)
}

// beforeEachPage runs the script in every page the tab opens from now
// on, before the page's own scripts.
func (b *browser) beforeEachPage(js string) {
	b.t.Helper()
	_, err := chromedp.Call(b.ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: js})
	require.NoError(b.t, err, "add a script to every page")
}

// click clicks the element the CSS selector finds, once it is there, in
// the page itself: chromedp.Click sends the mouse to where the element
// was when it looked, and a list that a stream re-renders meanwhile (a
// tile moves as another app's status comes in) takes the click elsewhere.
func (b *browser) click(sel string) {
	b.t.Helper()
	q, _ := json.Marshal(sel)
	b.waitFor("the element "+sel, fmt.Sprintf(`!!document.querySelector(%s)`, q), 30*time.Second)
	b.run("click "+sel, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector(%s).click()`, q)))
}

// waitFor waits until the JavaScript expression is true, within timeout,
// across page loads; on failure it says what the page showed.
func (b *browser) waitFor(what, expr string, timeout time.Duration) {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithDeadline(b.ctx, deadline)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			text, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.body.innerText`))
			b.t.Fatalf("%s: not within %s (%v); the page shows:\n%s", what, timeout, err, text)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// login logs in at the server's login page with a local account.
func (b *browser) login(server, username, password string) {
	b.t.Helper()
	b.run("open the login page", chromedp.Navigate(server+"/login"))
	b.waitFor("the login page", has(`form[aria-label="Log in"]`), 30*time.Second)
	b.run("log in as "+username,
		chromedp.SendKeys(chromedp.CSS(`input[name=username]`), username),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), password),
		chromedp.Click(chromedp.CSS(`form[aria-label="Log in"] button[type=submit]`)))
	b.waitFor("the applications page", has(`section[aria-label="Applications"]`), 30*time.Second)
}

// jsonDecode decodes a response body.
func jsonDecode(body string, out any) error { return json.Unmarshal([]byte(body), out) }

// press clicks the button (or tab) under scope whose text is label, once
// it is there.
func (b *browser) press(scope, label string) {
	b.t.Helper()
	q, _ := json.Marshal(scope + ` button`)
	l, _ := json.Marshal(label)
	find := fmt.Sprintf(`[...document.querySelectorAll(%s)].find((e) => e.innerText.trim() === %s)`, q, l)
	b.waitFor("the button "+label, "!!"+find, 30*time.Second)
	b.run("press "+label, chromedp.Evaluate[chromedp.Void](find+".click()"))
}

// has is an expression: the element sel exists and its text holds each
// of texts.
func has(sel string, texts ...string) string {
	q, _ := json.Marshal(sel)
	w, _ := json.Marshal(append([]string{}, texts...))
	return fmt.Sprintf(`(() => { const e = document.querySelector(%s); return !!e && %s.every((x) => e.innerText.includes(x)); })()`, q, w)
}

// gone is an expression: no element sel exists.
func gone(sel string) string {
	q, _ := json.Marshal(sel)
	return fmt.Sprintf(`document.querySelector(%s) === null`, q)
}

// screenshot writes the page, as it is, to docs/images/NAME.png: the docs
// show what the tests see.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	require.NoError(b.t, err, "screenshot "+name)
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "docs", "images")
	require.NoError(b.t, os.MkdirAll(dir, 0o755))
	require.NoError(b.t, os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644))
}

// fetch sends a request from the page, with its session, and answers the
// status.
func (b *browser) fetch(method, path string, body string) int {
	b.t.Helper()
	js := fmt.Sprintf(`fetch(%q, {method: %q, headers: {'Content-Type': 'application/json'}, body: %q}).then((r) => r.status)`, path, method, body)
	status, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](js, chromedp.EvalAwaitPromise))
	require.NoError(b.t, err, "fetch "+path)
	return status
}
