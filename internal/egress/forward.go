package egress

import (
	"fmt"
	"io"
	"net"
	"sync"
)

// Forward relays connections to 127.0.0.1 of the sandbox's own loopback
// to the proxy's socket (its path inside the sandbox), for a plugin's
// commands, which speak TCP to a proxy: addr is the relay's address,
// stop ends it and the connections it relays.
func Forward(socket string) (addr string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("the egress relay on the sandbox's loopback: %w", err)
	}
	var mu sync.Mutex
	conns := map[net.Conn]struct{}{}
	stopped := false
	keep := func(c net.Conn) bool {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			_ = c.Close()
			return false
		}
		conns[c] = struct{}{}
		return true
	}
	drop := func(c net.Conn) {
		mu.Lock()
		defer mu.Unlock()
		_ = c.Close()
		delete(conns, c)
	}
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				out, err := net.Dial("unix", socket)
				if err != nil {
					_ = in.Close()
					return
				}
				if !keep(in) || !keep(out) {
					_ = in.Close()
					_ = out.Close()
					return
				}
				defer drop(in)
				defer drop(out)
				relay(in, out)
			}()
		}
	}()
	stop = func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		for c := range conns {
			_ = c.Close()
		}
	}
	return ln.Addr().String(), stop, nil
}

// relay copies both ways until both directions end.
func relay(a, b net.Conn) {
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		closeWrite(dst)
		done <- struct{}{}
	}
	go pipe(a, b)
	go pipe(b, a)
	<-done
	<-done
}

// Env are the variables that send a plugin's HTTP and HTTPS through the
// relay at addr, in the spellings tools read (curl reads http_proxy in
// lower case only). NO_PROXY is empty: nothing goes around the proxy,
// there being no other way out of the sandbox.
func Env(addr string) []string {
	u := "http://" + addr
	return []string{"HTTPS_PROXY=" + u, "https_proxy=" + u, "HTTP_PROXY=" + u, "http_proxy=" + u, "NO_PROXY=", "no_proxy="}
}
