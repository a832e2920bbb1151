package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"sync"
	"time"
)

// tlsFlags configure TLS to Temporal (Temporal Cloud or a self-hosted
// cluster); TLS is on when any is set.
type tlsFlags struct {
	cert, key, ca, serverName string
}

func (f tlsFlags) enabled() bool {
	return f.cert != "" || f.key != "" || f.ca != "" || f.serverName != ""
}

// config builds the TLS config for the frontend at address. The client key
// pair is read again when its files change, since Kubernetes swaps mounted
// Secret files in place when certificates rotate.
func (f tlsFlags) config(address string) (*tls.Config, error) {
	if !f.enabled() {
		return nil, nil
	}
	if (f.cert == "") != (f.key == "") {
		return nil, fmt.Errorf("TLS to Temporal: give both --temporal-tls-cert and --temporal-tls-key, or neither")
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: f.serverName}
	if cfg.ServerName == "" {
		if host, _, err := net.SplitHostPort(address); err == nil {
			cfg.ServerName = host
		}
	}
	if f.ca != "" {
		pem, err := os.ReadFile(f.ca)
		if err != nil {
			return nil, fmt.Errorf("TLS to Temporal: read CA bundle: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("TLS to Temporal: %s holds no PEM certificate", f.ca)
		}
		cfg.RootCAs = pool
	}
	if f.cert != "" {
		kp := &keyPair{cert: f.cert, key: f.key}
		if _, err := kp.get(); err != nil {
			return nil, err
		}
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return kp.get() }
	}
	return cfg, nil
}

// keyPair is a client certificate reloaded when its files change.
type keyPair struct {
	cert, key string
	mu        sync.Mutex
	loaded    *tls.Certificate
	modTime   time.Time
}

func (k *keyPair) get() (*tls.Certificate, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	st, err := os.Stat(k.cert)
	if err != nil {
		return nil, fmt.Errorf("TLS to Temporal: client certificate: %w", err)
	}
	if k.loaded != nil && st.ModTime().Equal(k.modTime) {
		return k.loaded, nil
	}
	c, err := tls.LoadX509KeyPair(k.cert, k.key)
	if err != nil {
		return nil, fmt.Errorf("TLS to Temporal: load client key pair: %w", err)
	}
	k.loaded, k.modTime = &c, st.ModTime()
	return k.loaded, nil
}
