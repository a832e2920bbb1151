package scm

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ferry-gitops/ferry/internal/netpolicy"
)

// Config is what every provider's client is made of.
type Config struct {
	// API is the provider's API base URL as the generator's api field
	// gives it; empty: the public service (GitHub, GitLab; Gitea has
	// none).
	API string
	// Token authenticates the requests; empty: anonymous.
	Token string
	// HTTP sends the requests; nil: HTTPClient(nil, false).
	HTTP *http.Client
	// Hosts is the host policy the API URL is checked against before any
	// request (HTTP dials through it too, see HTTPClient).
	Hosts *netpolicy.Hosts
}

// requestTimeout bounds one API request.
const requestTimeout = 60 * time.Second

// HTTPClient is a client for a provider's API: it dials through the host
// policy (nil: any address), skips TLS verification when insecure (the
// generators' insecure field), and follows a redirect only to the host it
// was sent to, so that a token never leaves for another host.
func HTTPClient(hosts *netpolicy.Hosts, insecure bool) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = hosts.DialContext
	if insecure {
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the user's insecure: true
	}
	return &http.Client{Transport: tr, Timeout: requestTimeout, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("more than 5 redirects")
		}
		if req.URL.Host != via[0].URL.Host {
			return fmt.Errorf("redirected to another host (%s): the token is not sent there; set api to the provider's API URL", req.URL.Host)
		}
		return nil
	}}
}

// APIError is a provider's answer other than 2xx, or one that is not the
// JSON expected.
type APIError struct {
	// What was asked, such as "list the pull requests of owner/repo".
	What string
	// URL is the request's URL without its query.
	URL    string
	Status int
	// Message is the provider's own message, when its body gave one.
	Message string
	// Err is why the body could not be read, for a 2xx answer.
	Err error
}

func (e *APIError) Error() string {
	switch {
	case e.Err != nil:
		return fmt.Sprintf("%s: GET %s: %v", e.What, e.URL, e.Err)
	case e.Message != "":
		return fmt.Sprintf("%s: GET %s: %d %s: %s", e.What, e.URL, e.Status, http.StatusText(e.Status), e.Message)
	}
	return fmt.Sprintf("%s: GET %s: %d %s", e.What, e.URL, e.Status, http.StatusText(e.Status))
}

// IsNotFound reports whether err is a provider's 404.
func IsNotFound(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == http.StatusNotFound
}

// conn is one provider's API at a base URL.
type conn struct {
	base  *url.URL // ends in '/'
	http  *http.Client
	hosts *netpolicy.Hosts
	// auth sets the token's header on a request.
	auth func(h http.Header)
}

func newConn(cfg Config, api string, auth func(h http.Header)) (*conn, error) {
	u, err := url.Parse(api)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("api %q is not an http(s) URL: write the provider's API URL, such as https://git.example.com", api)
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	if err := cfg.Hosts.CheckURL(u.String()); err != nil {
		return nil, fmt.Errorf("api %s: %w", u, err)
	}
	c := &conn{base: u, http: cfg.HTTP, hosts: cfg.Hosts, auth: auth}
	if c.http == nil {
		c.http = HTTPClient(cfg.Hosts, false)
	}
	if cfg.Token == "" {
		c.auth = func(http.Header) {}
	}
	return c, nil
}

// escape is a path segment with '/' escaped too (GitLab's project and
// group paths, branch names).
func escape(s string) string { return url.PathEscape(s) }

// get asks for path (relative to the base, already escaped) with query,
// decodes the JSON answer into out and returns the response's headers.
// what names the request in errors.
func (c *conn) get(ctx context.Context, what, path string, query url.Values, out any) (http.Header, error) {
	ref, err := url.Parse(path)
	if err != nil {
		return nil, fmt.Errorf("%s: bad path %q: %w", what, path, err)
	}
	u := c.base.ResolveReference(ref)
	u.RawQuery = query.Encode()
	return c.getURL(ctx, what, u, out)
}

// getURL asks for u, which must be on the API's host: a pagination link
// elsewhere is refused.
func (c *conn) getURL(ctx context.Context, what string, u *url.URL, out any) (http.Header, error) {
	shown := *u
	shown.RawQuery = ""
	if u.Scheme != c.base.Scheme || u.Host != c.base.Host {
		return nil, &APIError{What: what, URL: shown.String(), Err: fmt.Errorf("the provider pointed to another host than its API's %s: not followed", c.base.Host)}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "ferry")
	c.auth(req.Header)
	resp, err := c.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its URL may carry the query; shown has none
		}
		return nil, fmt.Errorf("%s: GET %s: %w", what, shown.String(), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, &APIError{What: what, URL: shown.String(), Status: resp.StatusCode, Err: fmt.Errorf("read the answer: %w", err)}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &APIError{What: what, URL: shown.String(), Status: resp.StatusCode, Message: providerMessage(body)}
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			return nil, &APIError{What: what, URL: shown.String(), Status: resp.StatusCode,
				Err: fmt.Errorf("the answer is not the JSON the API documents (%d bytes, %q): %w", len(body), resp.Header.Get("Content-Type"), err)}
		}
	}
	return resp.Header, nil
}

// providerMessage is the message of a provider's JSON error body
// ({"message": …}, GitLab's {"error": …}), cut short; "" otherwise.
func providerMessage(body []byte) string {
	var m struct {
		Message any    `json:"message"`
		Error   string `json:"error"`
	}
	if json.Unmarshal(body, &m) != nil {
		return ""
	}
	msg := m.Error
	if s, ok := m.Message.(string); ok && s != "" {
		msg = s
	} else if m.Message != nil && msg == "" {
		b, _ := json.Marshal(m.Message)
		msg = string(b)
	}
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	return msg
}

// nextLink is the rel="next" URL of a Link header (GitHub, Gitea), if any.
func nextLink(h http.Header) (*url.URL, bool) {
	for _, link := range h.Values("Link") {
		for _, part := range strings.Split(link, ",") {
			target, params, ok := strings.Cut(strings.TrimSpace(part), ";")
			if !ok || !strings.Contains(strings.ReplaceAll(params, " ", ""), `rel="next"`) {
				continue
			}
			u, err := url.Parse(strings.Trim(strings.TrimSpace(target), "<>"))
			if err == nil {
				return u, true
			}
		}
	}
	return nil, false
}

// maxPages bounds the pages one listing follows.
const maxPages = 1000

// pages follows the Link header's next pages from the first request,
// decoding each page into a fresh T and handing it to each.
func pages[T any](ctx context.Context, c *conn, what, path string, query url.Values, each func(T) error) error {
	var page T
	h, err := c.get(ctx, what, path, query, &page)
	for n := 1; ; n++ {
		if err != nil {
			return err
		}
		if err := each(page); err != nil {
			return err
		}
		next, ok := nextLink(h)
		if !ok {
			return nil
		}
		if n >= maxPages {
			return fmt.Errorf("%s: more than %d pages", what, maxPages)
		}
		var zero T
		page = zero
		h, err = c.getURL(ctx, what, next, &page)
	}
}

// found is get with a 404 as false: whether the provider has the path,
// decoded into out (nil: not read).
func (c *conn) found(ctx context.Context, what, path string, query url.Values, out any) (bool, error) {
	_, err := c.get(ctx, what, path, query, out)
	if IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}
