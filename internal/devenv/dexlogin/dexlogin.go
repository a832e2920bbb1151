// Package dexlogin logs a user in at Dex as a browser does, for tests of the
// clients of the stack's real OIDC provider (ferry-server's SSO): it follows
// the redirects of an authorization request, fills Dex's password form and
// stops at the redirect back to the client, whose URL carries the code.
package dexlogin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"

	"golang.org/x/net/html"
)

// maxHops bounds the redirects of one step of a login.
const maxHops = 10

// ErrRefused is returned when Dex shows its login form again after the
// credentials were posted: the login or the password is wrong.
var ErrRefused = errors.New("dex refused the login")

// Browser is a browser with its cookies, across the steps of a login.
type Browser struct {
	// Client carries the cookie jar; it does not follow redirects (Login
	// does, to stop at the client's redirect URI). A test may go on with it,
	// e.g. to open the callback URL with the cookies of the login.
	Client *http.Client
}

// New returns a Browser with an empty cookie jar.
func New() *Browser {
	jar, _ := cookiejar.New(nil) // never fails without options
	return &Browser{Client: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// page is a response that is not a redirect.
type page struct {
	url    *url.URL
	status string
	code   int
	doc    *html.Node
}

// Login opens start (an authorization URL, or a page of the client that
// redirects to one), follows the redirects to Dex's password form, posts
// login (the user's email) and password, and follows the redirects again
// until one goes to redirectURI (same scheme, host and path). It returns
// that URL, with code and state in its query, without opening it. A wrong
// login or password gives ErrRefused.
func (b *Browser) Login(ctx context.Context, start, redirectURI, login, password string) (*url.URL, error) {
	target, err := url.Parse(redirectURI)
	if err != nil {
		return nil, fmt.Errorf("redirect URI: %w", err)
	}
	p, callback, err := b.open(ctx, http.MethodGet, start, nil, target)
	if err != nil || callback != nil { // a session cookie may skip the form
		return callback, err
	}
	if p.code != http.StatusOK {
		return nil, fmt.Errorf("opening %s, Dex answered %s at %s: %s", start, p.status, p.url.Redacted(), snippet(textOf(p.doc)))
	}
	form, err := passwordForm(p)
	if err != nil {
		return nil, err
	}
	form.values.Set(form.loginField, login)
	form.values.Set(form.passwordField, password)
	p, callback, err = b.open(ctx, http.MethodPost, form.action, form.values, target)
	if err != nil || callback != nil {
		return callback, err
	}
	if _, err := passwordForm(p); err == nil { // Dex answers 401 with the form again
		return nil, fmt.Errorf("%w: %s", ErrRefused, textOf(findID(p.doc, "login-error")))
	}
	return nil, fmt.Errorf("after the login Dex answered %s at %s, not a redirect to %s: %s",
		p.status, p.url.Redacted(), redirectURI, snippet(textOf(p.doc)))
}

// open requests rawURL (a POST sends form) and follows redirects: it
// returns the first redirect to target's scheme, host and path, or else the
// page the redirects end at, whatever its status.
func (b *Browser) open(ctx context.Context, method, rawURL string, form url.Values, target *url.URL) (*page, *url.URL, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, nil, err
	}
	for range maxHops {
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader(form.Encode())
		}
		req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
		if err != nil {
			return nil, nil, err
		}
		if method == http.MethodPost {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := b.Client.Do(req)
		if err != nil {
			return nil, nil, err
		}
		loc, _ := resp.Location() // resolved against the request's URL
		if resp.StatusCode >= 300 && resp.StatusCode < 400 && loc != nil {
			resp.Body.Close()
			if loc.Scheme == target.Scheme && loc.Host == target.Host && loc.Path == target.Path {
				return nil, loc, nil
			}
			method, u = http.MethodGet, loc
			continue
		}
		doc, err := html.Parse(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("%s %s: %w", method, u.Redacted(), err)
		}
		return &page{url: u, status: resp.Status, code: resp.StatusCode, doc: doc}, nil, nil
	}
	return nil, nil, fmt.Errorf("%s %s: more than %d redirects", method, rawURL, maxHops)
}

// loginForm is a page's form with a password input.
type loginForm struct {
	action                    string
	values                    url.Values // its inputs' values: hidden ones go back as they are
	loginField, passwordField string
}

// passwordForm finds the form of p that has a password input, and its text
// (or email) input for the login.
func passwordForm(p *page) (*loginForm, error) {
	for f := range p.doc.Descendants() {
		if f.Type != html.ElementNode || f.Data != "form" {
			continue
		}
		form := &loginForm{values: url.Values{}}
		for in := range f.Descendants() {
			if in.Type != html.ElementNode || in.Data != "input" || attr(in, "name") == "" {
				continue
			}
			name := attr(in, "name")
			switch strings.ToLower(attr(in, "type")) {
			case "password":
				form.passwordField = name
			case "", "text", "email":
				if form.loginField == "" {
					form.loginField = name
				}
			}
			form.values.Set(name, attr(in, "value"))
		}
		if form.passwordField == "" || form.loginField == "" {
			continue
		}
		action, err := p.url.Parse(attr(f, "action")) // empty: the page itself
		if err != nil {
			return nil, fmt.Errorf("login form of %s: action: %w", p.url.Redacted(), err)
		}
		form.action = action.String()
		return form, nil
	}
	return nil, fmt.Errorf("%s (%s) has no login form with a password: %s", p.url.Redacted(), p.status, snippet(textOf(p.doc)))
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func findID(n *html.Node, id string) *html.Node {
	for d := range n.Descendants() {
		if d.Type == html.ElementNode && attr(d, "id") == id {
			return d
		}
	}
	return nil
}

// textOf is the visible text of n, its blanks collapsed.
func textOf(n *html.Node) string {
	if n == nil {
		return ""
	}
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode && (d.Parent == nil || (d.Parent.Data != "script" && d.Parent.Data != "style")) {
			b.WriteString(d.Data)
			b.WriteByte(' ')
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

func snippet(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
