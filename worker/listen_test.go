package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"
)

// serveForTest serves handlers with timeouts t on a loopback port until
// the test ends, and returns its address.
func serveForTest(tb testing.TB, handlers map[string]http.Handler, t httpTimeouts) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveOn(ctx, ln, handlers, t) }()
	tb.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			tb.Error(err)
		}
	})
	return ln.Addr().String()
}

// TestListenerCutsSlowClients: a client that sends its headers a line at a
// time, one that sends a body a byte at a time, and one that keeps an idle
// connection are each cut off by the server (the connection ends in EOF or
// a reset), long before the test's own deadline.
func TestListenerCutsSlowClients(t *testing.T) {
	handlers := map[string]http.Handler{
		"/healthz": http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) }),
		// As the webhook does: read the whole body, then answer.
		"/api/webhook": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, err := io.ReadAll(r.Body); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
			}
		}),
	}
	short := httpTimeouts{readHeader: 300 * time.Millisecond, read: 600 * time.Millisecond, write: time.Second, idle: 600 * time.Millisecond}
	addr := serveForTest(t, handlers, short)

	tests := []struct {
		name  string
		start string // sent at once
		drip  string // then repeated every 50 ms until the server ends the connection
	}{
		{"headers sent slowly", "GET /healthz HTTP/1.1\r\nHost: ferry\r\n", "X-Slow: 1\r\n"},
		{"body sent slowly", "POST /api/webhook HTTP/1.1\r\nHost: ferry\r\nContent-Length: 100000\r\n\r\n", "x"},
		{"idle keep-alive", "GET /healthz HTTP/1.1\r\nHost: ferry\r\n\r\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := io.WriteString(conn, tt.start); err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			defer close(stop)
			if tt.drip != "" {
				go func() {
					tick := time.NewTicker(50 * time.Millisecond)
					defer tick.Stop()
					for {
						select {
						case <-stop:
							return
						case <-tick.C:
							if _, err := io.WriteString(conn, tt.drip); err != nil {
								return
							}
						}
					}
				}()
			}
			// Far beyond every timeout above: reaching it means the
			// server held the connection.
			if err := conn.SetReadDeadline(time.Now().Add(60 * time.Second)); err != nil {
				t.Fatal(err)
			}
			_, err = io.Copy(io.Discard, conn)
			switch {
			case err == nil, errors.Is(err, syscall.ECONNRESET):
				// The server closed the connection.
			case errors.Is(err, os.ErrDeadlineExceeded):
				t.Fatalf("the server still held the connection after 60 s")
			default:
				t.Fatalf("reading the connection: %v", err)
			}
		})
	}
}

// TestListenerTimeoutsSet: the worker's listeners use all four timeouts.
func TestListenerTimeoutsSet(t *testing.T) {
	tm := listenerTimeouts
	for name, d := range map[string]time.Duration{"read header": tm.readHeader, "read": tm.read, "write": tm.write, "idle": tm.idle} {
		if d <= 0 {
			t.Errorf("the %s timeout is %v: a slow client could hold the listener", name, d)
		}
	}
}
