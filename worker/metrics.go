package main

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/uber-go/tally/v4"
	tallyprom "github.com/uber-go/tally/v4/prometheus"
	"go.temporal.io/sdk/client"
	sdktally "go.temporal.io/sdk/contrib/tally"
)

// newMetrics returns the Temporal SDK's metrics handler (which the
// workflows' own ferry_* metrics go through too) reporting into registry.
func newMetrics(registry *prometheus.Registry) (client.MetricsHandler, func()) {
	reporter := tallyprom.NewReporter(tallyprom.Options{
		Registerer:       registry,
		DefaultTimerType: tallyprom.HistogramTimerType,
		OnRegisterError:  func(err error) { slog.Warn("metric registration failed", "error", err) },
	})
	scope, closer := tally.NewRootScope(tally.ScopeOptions{
		CachedReporter:  reporter,
		Separator:       tallyprom.DefaultSeparator,
		SanitizeOptions: &sdktally.PrometheusSanitizeOptions,
	}, time.Second)
	return sdktally.NewMetricsHandler(sdktally.NewPrometheusNamingScope(scope)), func() { _ = closer.Close() }
}

func metricsHandler(registry *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(registry, promhttp.HandlerOpts{})
}
