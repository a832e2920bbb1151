package main

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"testing"
	"time"

	"github.com/ferry-gitops/ferry/internal/manifests"
	"github.com/ferry-gitops/ferry/internal/pkitest"
)

// TestRedisTLS: against a real redis-server that speaks only TLS and wants
// a client certificate and a password, the worker's --redis-tls* and
// --redis-password flags give a working manifest cache; without the client
// certificate, the CA or TLS itself, the cache misses (never fails).
func TestRedisTLS(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed")
	}
	dir := t.TempDir()
	serverCA, clientCA := pkitest.NewCA(t, "redis-server-ca"), pkitest.NewCA(t, "redis-client-ca")
	serverCert, serverKey := serverCA.Issue(t, pkitest.Server, "127.0.0.1").Files(t, dir, "server")
	clientCert, clientKey := clientCA.Issue(t, pkitest.Client, "ferry-worker").Files(t, dir, "client")
	serverCAFile, _ := pkitest.Cert{CertPEM: serverCA.CertPEM}.Files(t, dir, "server-ca")
	clientCAFile, _ := pkitest.Cert{CertPEM: clientCA.CertPEM}.Files(t, dir, "client-ca")

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command("redis-server", "--port", "0", "--tls-port", fmt.Sprint(port), "--bind", "127.0.0.1",
		"--tls-cert-file", serverCert, "--tls-key-file", serverKey, "--tls-ca-cert-file", clientCAFile,
		"--tls-auth-clients", "yes", "--requirepass", "redis-pass",
		"--save", "", "--appendonly", "no", "--dir", dir, "--loglevel", "warning")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)

	full := redisFlags{password: "redis-pass", tls: true, ca: serverCAFile, cert: clientCert, key: clientKey}
	ctx := context.Background()
	roundTrip := func(f redisFlags, key string) bool {
		t.Helper()
		conn, err := f.conn(addr)
		if err != nil {
			t.Fatalf("conn %+v: %v", f, err)
		}
		c := manifests.NewRedisConn(conn, time.Hour)
		defer c.Close()
		c.Put(ctx, key, []byte("v"))
		v, ok := c.Get(ctx, key)
		return ok && string(v) == "v"
	}
	for deadline := time.Now().Add(10 * time.Second); !roundTrip(full, "ready"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("redis-server over TLS did not answer with the full configuration")
		}
	}
	noCert, noCA, plain, noPass := full, full, redisFlags{password: "redis-pass"}, full
	noCert.cert, noCert.key = "", ""
	noCA.ca = ""
	noPass.password = ""
	for name, f := range map[string]redisFlags{"no client certificate": noCert, "no CA": noCA, "no TLS": plain, "no password": noPass} {
		if roundTrip(f, "k-"+name) {
			t.Errorf("%s: the cache worked; the server should have refused it", name)
		}
	}
	if !roundTrip(full, "k-full") {
		t.Error("the full configuration no longer works")
	}
}
