package main

import (
	"net/http"
	"net/http/pprof"
)

// profileHandlers are Go's runtime profiles (net/http/pprof) under
// /debug/pprof/, as `go tool pprof` reads them, served on --pprof-addr, a
// listener of their own so that they can stay on loopback while /metrics
// is scraped from elsewhere. (A CPU profile or a trace may outlast the
// listener's write timeout: net/http/pprof extends the deadline by the
// seconds asked.) Not /debug/pprof/cmdline: the command line may hold
// --redis-password.
func profileHandlers() map[string]http.Handler {
	return map[string]http.Handler{
		"/debug/pprof/":        http.HandlerFunc(pprof.Index),
		"/debug/pprof/profile": http.HandlerFunc(pprof.Profile),
		"/debug/pprof/symbol":  http.HandlerFunc(pprof.Symbol),
		"/debug/pprof/trace":   http.HandlerFunc(pprof.Trace),
	}
}
