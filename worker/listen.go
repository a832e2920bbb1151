package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// httpTimeouts bound how long one client may hold a connection of the
// worker's listeners (metrics, health, webhook): a client that sends its
// request slowly, or keeps a connection open without using it, is cut off.
type httpTimeouts struct {
	// readHeader bounds reading a request's headers.
	readHeader time.Duration
	// read bounds reading a whole request, body included.
	read time.Duration
	// write bounds answering, from the end of the request's headers.
	write time.Duration
	// idle bounds waiting for the next request on a kept-alive connection.
	idle time.Duration
}

// listenerTimeouts are the worker's: a scrape, a health check and a webhook
// delivery (at most 1 MiB) are small and answered at once.
var listenerTimeouts = httpTimeouts{
	readHeader: 10 * time.Second, read: 30 * time.Second,
	write: 30 * time.Second, idle: 2 * time.Minute,
}

// serveMux serves handlers, by path, on addr until ctx ends.
func serveMux(ctx context.Context, addr string, handlers map[string]http.Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	return serveOn(ctx, ln, handlers, listenerTimeouts)
}

// serveOn serves handlers on ln with timeouts t until ctx ends; then it
// gives requests in flight 5 seconds.
func serveOn(ctx context.Context, ln net.Listener, handlers map[string]http.Handler, t httpTimeouts) error {
	mux := http.NewServeMux()
	for path, h := range handlers {
		mux.Handle(path, h)
	}
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: t.readHeader, ReadTimeout: t.read,
		WriteTimeout: t.write, IdleTimeout: t.idle,
	}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve on %s: %w", ln.Addr(), err)
	}
	return nil
}
