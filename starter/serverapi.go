package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// api is a client of ferry-server's REST API (Argo CD's paths).
type api struct {
	sc     *serverContext
	client *http.Client
}

func newAPI(sc *serverContext) *api {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	switch {
	case sc.Fingerprint != "":
		want := strings.ToUpper(strings.ReplaceAll(sc.Fingerprint, ":", ""))
		tc.InsecureSkipVerify = true // the pin below is the check
		tc.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) > 0 && fmt.Sprintf("%X", sha256.Sum256(raw[0])) == want {
				return nil
			}
			return errors.New("the server's certificate is not the one pinned by its fingerprint")
		}
	case sc.Insecure:
		tc.InsecureSkipVerify = true
	}
	return &api{sc: sc, client: &http.Client{Timeout: 5 * time.Minute, Transport: &http.Transport{TLSClientConfig: tc}}}
}

// serverError is an answer of the server that is no success.
type serverError struct {
	Status  int
	Message string
}

func (e *serverError) Error() string { return e.Message }

// do sends body as JSON and decodes the answer into out.
func (a *api) do(ctx context.Context, method, path string, query url.Values, body, out any) error {
	resp, err := a.send(ctx, a.client, method, path, query, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}

// stream GETs path and hands each line of the answer to fn, for as long as
// the server sends them (a followed log has no end but the user's
// interrupt, so no timeout applies).
func (a *api) stream(ctx context.Context, path string, query url.Values, fn func(line []byte) error) error {
	c := *a.client
	c.Timeout = 0
	resp, err := a.send(ctx, &c, "GET", path, query, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		if err := fn(sc.Bytes()); err != nil {
			return err
		}
	}
	return sc.Err()
}

// send sends body as JSON with the session's token; an answer that is no
// success is a *serverError.
func (a *api) send(ctx context.Context, c *http.Client, method, path string, query url.Values, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	u := a.sc.Server + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	if a.sc.Token != "" {
		req.Header.Set("Authorization", "Bearer "+a.sc.Token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("ferry-server %s: %w", a.sc.Server, err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	var e struct{ Message string }
	if json.Unmarshal(data, &e) != nil || e.Message == "" {
		e.Message = strings.TrimSpace(string(data))
	}
	if resp.StatusCode == http.StatusUnauthorized {
		e.Message += " (ferry login again)"
	}
	return nil, &serverError{Status: resp.StatusCode, Message: e.Message}
}

// login trades a username and password for a session token.
func (a *api) login(ctx context.Context, username, password string) (string, error) {
	var out struct{ Token string }
	err := a.do(ctx, "POST", "/api/v1/session", nil, map[string]string{"username": username, "password": password}, &out)
	return out.Token, err
}

// appPath is the path of an app, with appNamespace for "namespace/name".
func appPath(name, suffix string) (string, url.Values) {
	q := url.Values{}
	if ns, n, ok := strings.Cut(name, "/"); ok {
		q.Set("appNamespace", ns)
		name = n
	}
	return "/api/v1/applications/" + url.PathEscape(name) + suffix, q
}
