package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCLITLSToTemporal runs `ferry app list` through a loopback proxy that
// terminates mutual TLS in front of the stack's Temporal dev server (which
// serves no TLS itself): the CLI gets in with the worker's --temporal-tls-*
// flags or with the temporal CLI's TEMPORAL_TLS_* variables, and is turned
// away without a client certificate, with a CA that did not sign the
// server, or in plain text.
func TestCLITLSToTemporal(t *testing.T) {
	dir := t.TempDir()
	ca, caKey := newCA(t, dir, "ca")
	newCert(t, dir, "server", ca, caKey, "temporal.ferry.test", x509.ExtKeyUsageServerAuth)
	newCert(t, dir, "client", ca, caKey, "ferry-cli", x509.ExtKeyUsageClientAuth)
	newCA(t, dir, "other-ca")
	proxy := startTLSProxy(t, dir, stack.TemporalAddress)
	file := func(name string) string { return filepath.Join(dir, name) }

	run := func(env []string, args ...string) (string, error) {
		cmd := testEnv().FerryCmd(t, append([]string{"app", "list", "--temporal-address", proxy}, args...)...)
		cmd.Env = append(cmd.Env, env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	flags := []string{"--temporal-tls-cert", file("client.pem"), "--temporal-tls-key", file("client-key.pem"),
		"--temporal-tls-ca", file("ca.pem"), "--temporal-tls-server-name", "temporal.ferry.test"}
	out, err := run(nil, flags...)
	require.NoError(t, err, "the worker's flags: %s", out)

	for name, env := range map[string][]string{
		"legacy variables": {"TEMPORAL_TLS_CERT=" + file("client.pem"), "TEMPORAL_TLS_KEY=" + file("client-key.pem"),
			"TEMPORAL_TLS_CA=" + file("ca.pem"), "TEMPORAL_TLS_SERVER_NAME=temporal.ferry.test"},
		"current variables": {"TEMPORAL_TLS_CLIENT_CERT_PATH=" + file("client.pem"), "TEMPORAL_TLS_CLIENT_KEY_PATH=" + file("client-key.pem"),
			"TEMPORAL_TLS_SERVER_CA_CERT_PATH=" + file("ca.pem"), "TEMPORAL_TLS_SERVER_NAME=temporal.ferry.test"},
	} {
		out, err := run(env)
		require.NoError(t, err, "%s: %s", name, out)
	}

	for name, args := range map[string][]string{
		"plain text":            nil,
		"no client certificate": {"--temporal-tls-ca", file("ca.pem"), "--temporal-tls-server-name", "temporal.ferry.test"},
		"another CA":            append(flags[:4:4], "--temporal-tls-ca", file("other-ca.pem"), "--temporal-tls-server-name", "temporal.ferry.test"),
		"wrong server name":     flags[:6],
	} {
		out, err := run(nil, args...)
		require.Error(t, err, "%s: the CLI got in: %s", name, out)
		require.Contains(t, out, "connect to Temporal", name)
	}
	_, err = run(nil, "--temporal-tls-cert", file("client.pem"))
	require.Error(t, err)
}

// startTLSProxy serves TLS (client certificates required, signed by
// dir/ca.pem) on a loopback port and copies each connection to target.
func startTLSProxy(t *testing.T, dir, target string) string {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "server.pem"), filepath.Join(dir, "server-key.pem"))
	require.NoError(t, err)
	caPEM, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(caPEM))
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: pool,
		ClientAuth: tls.RequireAndVerifyClientCert, NextProtos: []string{"h2"}, MinVersion: tls.VersionTLS12})
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer in.Close()
				if err := in.(*tls.Conn).Handshake(); err != nil {
					return
				}
				out, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer out.Close()
				go func() { _, _ = io.Copy(out, in); out.(*net.TCPConn).CloseWrite() }()
				_, _ = io.Copy(in, out)
			}()
		}
	}()
	return l.Addr().String()
}

func newCA(t *testing.T, dir, name string) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	writePEM(t, filepath.Join(dir, name+".pem"), "CERTIFICATE", der)
	ca, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return ca, key
}

func newCert(t *testing.T, dir, name string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, cn string, usage x509.ExtKeyUsage) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
	if !strings.Contains(cn, "cli") {
		tmpl.DNSNames = []string{cn}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	require.NoError(t, err)
	writePEM(t, filepath.Join(dir, name+".pem"), "CERTIFICATE", der)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	writePEM(t, filepath.Join(dir, name+"-key.pem"), "PRIVATE KEY", keyDER)
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600))
}
