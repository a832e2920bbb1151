// Package clienttls builds the TLS configuration of a client connection
// (to Temporal, to Redis) from PEM files, as the flags of ferry-worker and
// ferry name them:
//
//	cfg, err := clienttls.Files{CA: "ca.pem", Cert: "c.pem", Key: "k.pem"}.
//		Config("temporal:7233", "Temporal", "--temporal-tls")
//
// The client key pair is read again when its files change, since
// Kubernetes swaps mounted Secret files in place when certificates rotate.
package clienttls

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"sync"
	"time"
)

// Files are the PEM files and the server name of a TLS connection.
type Files struct {
	// Cert and Key are the client certificate and its key; both or neither.
	Cert, Key string
	// CA is the bundle the server's certificate is checked against; empty:
	// the system roots.
	CA string
	// ServerName is the name checked in the server's certificate; empty:
	// the host of the address.
	ServerName string
}

// Set reports whether any field is given.
func (f Files) Set() bool {
	return f.Cert != "" || f.Key != "" || f.CA != "" || f.ServerName != ""
}

// Config builds the TLS config for the server at address ("host:port").
// server names it in errors ("Temporal"), and flag is the prefix of the
// flags that give the files ("--temporal-tls").
func (f Files) Config(address, server, flag string) (*tls.Config, error) {
	what := "TLS to " + server
	if (f.Cert == "") != (f.Key == "") {
		return nil, fmt.Errorf("%s: give both %s-cert and %s-key, or neither", what, flag, flag)
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: f.ServerName}
	if cfg.ServerName == "" {
		if host, _, err := net.SplitHostPort(address); err == nil {
			cfg.ServerName = host
		}
	}
	if f.CA != "" {
		pem, err := os.ReadFile(f.CA)
		if err != nil {
			return nil, fmt.Errorf("%s: read CA bundle (%s-ca): %w", what, flag, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: %s (%s-ca) holds no PEM certificate", what, f.CA, flag)
		}
		cfg.RootCAs = pool
	}
	if f.Cert != "" {
		kp := &keyPair{what: what, cert: f.Cert, key: f.Key}
		if _, err := kp.get(); err != nil {
			return nil, err
		}
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return kp.get() }
	}
	return cfg, nil
}

// keyPair is a client certificate reloaded when its files change.
type keyPair struct {
	what, cert, key string
	mu              sync.Mutex
	loaded          *tls.Certificate
	modTime         time.Time
}

func (k *keyPair) get() (*tls.Certificate, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	st, err := os.Stat(k.cert)
	if err != nil {
		return nil, fmt.Errorf("%s: client certificate: %w", k.what, err)
	}
	if k.loaded != nil && st.ModTime().Equal(k.modTime) {
		return k.loaded, nil
	}
	c, err := tls.LoadX509KeyPair(k.cert, k.key)
	if err != nil {
		return nil, fmt.Errorf("%s: load client key pair: %w", k.what, err)
	}
	k.loaded, k.modTime = &c, st.ModTime()
	return k.loaded, nil
}
