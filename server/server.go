package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"golang.org/x/sync/singleflight"

	"go.temporal.io/sdk/client"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/accounts"
	"github.com/ferry-gitops/ferry/internal/kube"
	"github.com/ferry-gitops/ferry/internal/manifests"
	"github.com/ferry-gitops/ferry/internal/tokens"
)

// server is ferry-server's state: its clients, its signing key, the live
// accounts and policy, and the audit log.
type server struct {
	cfg      *config
	log      *slog.Logger
	temporal client.Client
	kube     kubernetes.Interface
	dyn      dynamic.Interface
	store    *accounts.Store
	signer   *tokens.Signer
	limiter  *accounts.Limiter
	live     *live
	audit    *auditLog
	sso      sso
	hub      hub
	cache    viewCache
	flight   singleflight.Group // one query at a time of an app (server.query)
	queryApp func(ctx context.Context, name string) (*contract.View, error)
	regions  *regionAccess
	// metadata keeps the revision metadata answered, by repository and
	// commit (revisions.go).
	metadata *manifests.Memory
}

func newServer(ctx context.Context, cfg *config, log *slog.Logger) (*server, error) {
	rc, err := kube.LoadConfig(cfg.kubeconfig, cfg.controlContext)
	if cfg.kubeconfig == "" && cfg.controlContext == "" {
		rc, err = kube.InClusterConfig()
	}
	if err != nil {
		return nil, fmt.Errorf("the control cluster (--kubeconfig, --control-context): %w", err)
	}
	rc.UserAgent = "ferry-server"
	kc, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	access, err := newRegionAccess(cfg)
	if err != nil {
		return nil, err
	}
	tc, err := dialTemporal(ctx, cfg)
	if err != nil {
		return nil, err
	}
	s := &server{cfg: cfg, log: log, temporal: tc, kube: kc, dyn: dyn, regions: access, metadata: newRevisionCache(),
		store:   &accounts.Store{Client: kc, Namespace: cfg.controlNamespace},
		limiter: accounts.NewLimiter(cfg.loginFailures, cfg.loginFailureWindow),
		sso:     sso{pending: map[string]pendingLogin{}}}
	key, err := s.store.Bootstrap(ctx, tokens.NewKey)
	if err != nil {
		tc.Close()
		return nil, fmt.Errorf("the control namespace %s: %w", cfg.controlNamespace, err)
	}
	if s.signer, err = tokens.NewSigner(key); err != nil {
		tc.Close()
		return nil, fmt.Errorf("secret %s/%s key %s: %w (delete the key: a new one is made, and every token signed with the old one stops working)",
			cfg.controlNamespace, accounts.SecretName, accounts.SigningKeyKey, err)
	}
	if s.audit, err = openAudit(cfg.auditLog, kc, cfg.controlNamespace); err != nil {
		tc.Close()
		return nil, err
	}
	if s.live, err = watchLive(ctx, kc, cfg.controlNamespace, log); err != nil {
		tc.Close()
		return nil, err
	}
	s.queryApp = func(ctx context.Context, name string) (*contract.View, error) {
		return ferryclient.Query(ctx, tc, name)
	}
	s.hub = hub{log: log, cache: &s.cache, now: time.Now,
		list: func(ctx context.Context, fn func(string, contract.Summary)) error {
			return ferryclient.ListApps(ctx, tc, fn)
		},
		query: s.query}
	go s.live.watchProjects(ctx, tc)
	return s, nil
}

func (s *server) close() {
	s.temporal.Close()
	s.audit.close()
}

// dialTemporal connects with the server's own identity.
func dialTemporal(ctx context.Context, cfg *config) (client.Client, error) {
	var opts client.ConnectionOptions
	if cfg.temporalTLS.Set() {
		t, err := cfg.temporalTLS.Config(cfg.temporalAddress, "Temporal", "--temporal-tls")
		if err != nil {
			return nil, err
		}
		opts.TLS = t
	}
	host, _ := os.Hostname()
	c, err := client.DialContext(ctx, client.Options{HostPort: cfg.temporalAddress, Namespace: cfg.namespace,
		Identity: "ferry-server@" + host, ConnectionOptions: opts, Logger: quietLogger{}})
	if err != nil {
		return nil, fmt.Errorf("connect to Temporal at %s: %w", cfg.temporalAddress, err)
	}
	return c, nil
}

// quietLogger keeps the SDK's own logging off the server's log.
type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}
