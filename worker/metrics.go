package main

import (
	"context"
	"errors"
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

// serveHTTP serves /metrics, /healthz and extra handlers on addr until ctx ends.
func serveHTTP(ctx context.Context, addr string, handlers map[string]http.Handler) error {
	srv := &http.Server{Addr: addr, ReadHeaderTimeout: 10 * time.Second}
	mux := http.NewServeMux()
	for path, h := range handlers {
		mux.Handle(path, h)
	}
	srv.Handler = mux
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func metricsHandler(registry *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(registry, promhttp.HandlerOpts{})
}
