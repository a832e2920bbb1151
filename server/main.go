// Command ferry-server is Ferry's front door: the one place people and
// their tools come in. It serves Argo CD's REST API (the part scripts and
// Backstage use) over HTTPS, with Argo CD's local accounts, SSO through
// an OIDC provider, project role tokens and argocd-rbac-cm's policies, and
// writes every change it allows and every denial to an audit log. It
// reaches Temporal and the control cluster with its own identity; people
// need neither.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	cfg, err := parseFlags(os.Args[1:], os.LookupEnv, os.Stderr)
	if errors.Is(err, errHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ferry-server:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "ferry-server:", err)
		os.Exit(1)
	}
}

// run starts the server and serves until ctx ends.
func run(ctx context.Context, cfg *config) error {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	s, err := newServer(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer s.close()
	tlsCfg, fingerprint, err := cfg.serverTLS()
	if err != nil {
		return err
	}
	ln, err := listen(cfg.listen, tlsCfg)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: s.routes(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	log.Info("ferry-server serving", "url", "https://"+ln.Addr().String(), "certificate-sha256", fingerprint)
	fmt.Printf("ferry-server https://%s (certificate SHA-256 %s)\n", ln.Addr(), fingerprint)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}
