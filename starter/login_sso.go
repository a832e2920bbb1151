package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"

	"time"

	"golang.org/x/term"

	"github.com/spf13/cobra"
)

// ssoLogin logs in through the server's OIDC provider in a browser: the
// CLI listens on a loopback port, sends the browser to the server's
// /auth/login with that port as where to return, and takes the session
// the server hands back there (checked against a random state).
func ssoLogin(cmd *cobra.Command, sc *serverContext) (token, username string, err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", "", err
	}
	defer ln.Close()
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	state := hex.EncodeToString(b)
	back := fmt.Sprintf("http://%s/callback?state=%s", ln.Addr(), state)
	start := sc.Server + "/auth/login?return_url=" + url.QueryEscape(back)
	fmt.Fprintf(cmd.OutOrStdout(), "log in in your browser: %s\n", start)
	// A browser is opened for a person at a terminal, not for a script.
	if open, err := exec.LookPath("xdg-open"); err == nil && term.IsTerminal(int(os.Stdout.Fd())) {
		_ = exec.Command(open, start).Start()
	}
	got := make(chan string, 1)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.URL.Path != "/callback" || q.Get("state") != state || q.Get("token") == "" {
			http.Error(w, "not the login this ferry login waits for", http.StatusBadRequest)
			return
		}
		fmt.Fprintln(w, "ferry: logged in; you may close this window")
		select {
		case got <- q.Get("token"):
		default:
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	ctx, cancel := context.WithTimeout(cmd.Context(), 5*time.Minute)
	defer cancel()
	select {
	case token = <-got:
	case <-ctx.Done():
		return "", "", errors.New("no login within 5 minutes")
	}
	sc.Token = token
	var info struct{ Username string }
	if err := newAPI(sc).do(ctx, "GET", "/api/v1/session/userinfo", nil, nil, &info); err != nil {
		return "", "", err
	}
	return token, info.Username, nil
}
