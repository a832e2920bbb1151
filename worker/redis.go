package main

import (
	"fmt"

	"github.com/ferry-gitops/ferry/internal/clienttls"
	"github.com/ferry-gitops/ferry/internal/redisconn"
)

// redisFlags log in to Redis and encrypt the connection; --redis-addr
// names it.
type redisFlags struct {
	username, password string
	tls                bool
	ca, cert, key      string
}

// conn is how every Redis client of the worker connects to addr.
func (f redisFlags) conn(addr string) (redisconn.Options, error) {
	o := redisconn.Options{Addr: addr, Username: f.username, Password: f.password}
	files := clienttls.Files{CA: f.ca, Cert: f.cert, Key: f.key}
	if !f.tls && files.Set() {
		return o, fmt.Errorf("--redis-tls-ca, --redis-tls-cert and --redis-tls-key need --redis-tls")
	}
	if f.tls {
		cfg, err := files.Config(addr, "Redis", "--redis-tls")
		if err != nil {
			return o, err
		}
		o.TLS = cfg
	}
	return o, nil
}
