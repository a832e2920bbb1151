package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/workflows"
)

// appGauge keeps ferry_apps{sync_status,health_status}: the running apps
// counted by the search attributes their workflows upsert.
type appGauge struct {
	client client.Client
	apps   *prometheus.GaugeVec
}

func newAppGauge(c client.Client, reg prometheus.Registerer) *appGauge {
	g := &appGauge{client: c, apps: prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "ferry_apps", Help: "Running Applications by sync and health status.",
	}, []string{"sync_status", "health_status"})}
	reg.MustRegister(g.apps)
	return g
}

func (g *appGauge) run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := g.refresh(ctx); err != nil && ctx.Err() == nil {
			slog.Warn("count apps for ferry_apps failed", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (g *appGauge) refresh(ctx context.Context) error {
	counts := map[[2]string]int{}
	err := workflows.ListApps(ctx, g.client, func(_ string, s workflows.Summary) {
		counts[[2]string{orUnknown(s.Sync), orUnknown(s.Health)}]++
	})
	if err != nil {
		return err
	}
	g.apps.Reset()
	for k, n := range counts {
		g.apps.WithLabelValues(k[0], k[1]).Set(float64(n))
	}
	return nil
}

func orUnknown(s string) string {
	if s == "" {
		return "Unknown"
	}
	return s
}
