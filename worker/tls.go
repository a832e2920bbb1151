package main

import (
	"crypto/tls"

	"github.com/ferry-gitops/ferry/internal/clienttls"
)

// tlsFlags configure TLS to Temporal (Temporal Cloud or a self-hosted
// cluster); TLS is on when any is set.
type tlsFlags struct {
	cert, key, ca, serverName string
}

func (f tlsFlags) enabled() bool { return f.files().Set() }

func (f tlsFlags) files() clienttls.Files {
	return clienttls.Files{Cert: f.cert, Key: f.key, CA: f.ca, ServerName: f.serverName}
}

// config builds the TLS config for the frontend at address; nil when no
// TLS flag is set.
func (f tlsFlags) config(address string) (*tls.Config, error) {
	if !f.enabled() {
		return nil, nil
	}
	return f.files().Config(address, "Temporal", "--temporal-tls")
}
