package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
)

// profileHandlers are Go's runtime profiles (net/http/pprof) under
// /debug/pprof/, as `go tool pprof` reads them.
func profileHandlers() map[string]http.Handler {
	return map[string]http.Handler{
		"/debug/pprof/":        http.HandlerFunc(pprof.Index),
		"/debug/pprof/cmdline": http.HandlerFunc(pprof.Cmdline),
		"/debug/pprof/profile": http.HandlerFunc(pprof.Profile),
		"/debug/pprof/symbol":  http.HandlerFunc(pprof.Symbol),
		"/debug/pprof/trace":   http.HandlerFunc(pprof.Trace),
	}
}

// serveProfiles serves profileHandlers on addr until ctx ends, a listener
// of their own so that they can stay on loopback while /metrics is
// scraped from elsewhere. (A CPU profile or a trace may outlast the write
// timeout: net/http/pprof extends the deadline by the seconds asked.)
func serveProfiles(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--pprof-addr: listen on %s: %w", addr, err)
	}
	return serveOn(ctx, ln, profileHandlers(), listenerTimeouts)
}
