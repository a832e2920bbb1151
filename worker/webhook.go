package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"golang.org/x/sync/errgroup"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/webhook"
)

// webhookSecretEnv names the environment variable of a provider's secret.
func webhookSecretEnv(p webhook.Provider) string {
	return "FERRY_WEBHOOK_" + strings.ToUpper(string(p)) + "_SECRET"
}

// startReceiver builds the receiver of pushes, the webhook's and the repo
// poll's, and runs its signalling pool in g; the caller serves it at
// webhook.Path when the worker has --webhook-addr.
func startReceiver(ctx context.Context, g *errgroup.Group, cfg *config, c client.Client, reg prometheus.Registerer) (*webhook.Receiver, func()) {
	opts := webhook.DefaultOptions()
	opts.AllowUnsigned = cfg.webhookAllowUnsigned
	opts.Secrets = map[webhook.Provider]string{}
	var signed, unsigned []string
	for _, p := range webhook.Providers {
		if s := os.Getenv(webhookSecretEnv(p)); s != "" {
			opts.Secrets[p] = s
			signed = append(signed, string(p))
		} else {
			unsigned = append(unsigned, string(p))
		}
	}
	switch {
	case cfg.webhookAddr == "":
	case len(unsigned) > 0 && cfg.webhookAllowUnsigned:
		slog.Warn("webhook: accepting unsigned deliveries (--webhook-allow-unsigned)", "providers", unsigned)
	case len(signed) == 0:
		slog.Warn("webhook: no secret is configured, so every delivery will be refused: set FERRY_WEBHOOK_<GITHUB|GITLAB|BITBUCKET|GITEA>_SECRET or give --webhook-allow-unsigned")
	}
	var dedupe webhook.Deduper = webhook.NewMemoryDeduper()
	cleanup := func() {}
	if cfg.redisAddr != "" {
		// parseFlags checked the settings; a TLS file gone since leaves
		// deduplication to this process.
		if conn, err := cfg.redis.conn(cfg.redisAddr); err != nil {
			slog.Error("webhook dedupe: cannot connect to Redis, deduplicating in this process", "err", err)
		} else {
			rd := webhook.NewRedisDeduperConn(conn)
			dedupe, cleanup = rd, func() { _ = rd.Close() }
		}
	}
	receiver := webhook.NewReceiver(opts, temporalApps{c}, dedupe, webhook.NewMetrics(reg))
	g.Go(func() error { receiver.Run(ctx); return nil })
	if cfg.webhookAddr != "" {
		slog.Info("webhook: receiving pushes", "addr", cfg.webhookAddr, "path", webhook.Path, "signed", signed)
	}
	return receiver, cleanup
}

// serveWebhook serves the receiver on addr until ctx ends, with the
// listeners' timeouts (listen.go): a slow client is cut off.
func serveWebhook(ctx context.Context, addr string, h http.Handler) error {
	if err := serveMux(ctx, addr, map[string]http.Handler{webhook.Path: h}); err != nil {
		return fmt.Errorf("webhook: %w", err)
	}
	return nil
}

// temporalApps is the webhook's view of the apps: their workflows' search
// attributes, and the refresh signal.
type temporalApps struct{ client client.Client }

var _ webhook.Refresher = temporalApps{}

// Apps lists the running Application workflows, a page of up to 1,000 per
// visibility query, once per Git repository of their sources
// (FerryRepoURLs), and the ApplicationSets by their git generators'
// repositories (named by workflow ID, appSetOf), so that a push refreshes
// both.
func (a temporalApps) Apps(ctx context.Context) ([]webhook.App, error) {
	var apps []webhook.App
	err := ferryclient.ListApps(ctx, a.client, func(name string, s contract.Summary) {
		for _, repo := range s.GitRepoURLs() {
			apps = append(apps, webhook.App{Name: name, RepoURL: repo})
		}
	})
	if err != nil {
		return nil, err
	}
	sets, err := appSetsOfRepos(ctx, a)
	return append(apps, sets...), err
}

// Refresh sends the app the refresh signal with the push and the app's
// repo URLs it was to; the workflow decides whether the push moved a
// revision one of its sources tracks.
func (a temporalApps) Refresh(ctx context.Context, m webhook.Match, p webhook.Push) error {
	app := m.App
	id := contract.WorkflowID(app)
	if set, ok := appSetOf(app); ok {
		id = contract.AppSetWorkflowID(set)
	}
	err := a.client.SignalWorkflow(ctx, id, "", contract.SignalRefresh, contract.RefreshRequest{
		Push: &contract.Push{Repos: m.RepoURLs, Ref: p.Ref, Before: p.Before, After: p.After, DefaultBranch: p.DefaultBranch, Paths: p.Paths},
	})
	if _, gone := errors.AsType[*serviceerror.NotFound](err); gone {
		return fmt.Errorf("signal app %s: %w", app, webhook.ErrAppGone)
	}
	if err != nil {
		return fmt.Errorf("signal app %s: %w", app, err)
	}
	return nil
}
