package main

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"
)

// appGauge keeps ferry_apps{sync_status,health_status}, the running apps
// counted by the search attributes their workflows upsert, and
// ferry_app_info, one series per app as Argo CD's argocd_app_info: one
// listing of the namespace's apps feeds both, so their cardinality is the
// number of apps.
type appGauge struct {
	client client.Client
	apps   *prometheus.GaugeVec
	info   *prometheus.GaugeVec
}

func newAppGauge(c client.Client, reg prometheus.Registerer) *appGauge {
	g := &appGauge{client: c,
		apps: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "ferry_apps", Help: "Running Applications by sync and health status.",
		}, []string{"sync_status", "health_status"}),
		info: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "ferry_app_info", Help: "One series of value 1 per running Application: its project, repository, regions, sync and health status and last operation's phase.",
		}, []string{"name", "project", "repo", "dest_regions", "sync_status", "health_status", "operation"}),
	}
	reg.MustRegister(g.apps, g.info)
	return g
}

func (g *appGauge) run(ctx context.Context, every time.Duration) {
	for {
		n, err := g.refresh(ctx)
		if err != nil && ctx.Err() == nil {
			slog.Warn("count apps for ferry_apps failed", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(gaugePause(every, n)):
		}
	}
}

// gaugeAppsPerPause is how many apps one pause of the gauge covers.
const gaugeAppsPerPause = 1000

// gaugePause is the wait before the next listing of n apps: every, and
// every per gaugeAppsPerPause apps in a larger fleet. A listing's cost to
// the worker and to Temporal's visibility store grows with the apps it
// lists; so paced, the gauge costs a fleet of 5,000 what it costs one of
// 1,000, rather than five times as much (bench/README.md).
func gaugePause(every time.Duration, n int) time.Duration {
	return every * time.Duration(max(1, n/gaugeAppsPerPause))
}

// refresh lists the apps into both gauges and returns how many it listed.
func (g *appGauge) refresh(ctx context.Context) (int, error) {
	counts := map[[2]string]int{}
	var infos [][]string
	err := ferryclient.ListApps(ctx, g.client, func(name string, s contract.Summary) {
		counts[[2]string{orUnknown(s.Sync), orUnknown(s.Health)}]++
		regions := slices.Sorted(slices.Values(s.Regions))
		infos = append(infos, []string{name, s.Project, s.RepoURL, strings.Join(regions, ","),
			orUnknown(s.Sync), orUnknown(s.Health), s.Operation})
	})
	if err != nil {
		return 0, err
	}
	g.apps.Reset()
	for k, n := range counts {
		g.apps.WithLabelValues(k[0], k[1]).Set(float64(n))
	}
	g.info.Reset()
	for _, labels := range infos {
		g.info.WithLabelValues(labels...).Set(1)
	}
	return len(infos), nil
}

func orUnknown(s string) string {
	if s == "" {
		return "Unknown"
	}
	return s
}
