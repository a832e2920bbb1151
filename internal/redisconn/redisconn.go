// Package redisconn says how to reach and log in to the Redis that workers
// share (the manifest cache, webhook deduplication): its address, an ACL
// user and password, and TLS.
package redisconn

import (
	"crypto/tls"

	"github.com/redis/go-redis/v9"
)

// Options are the connection settings common to every Redis client.
type Options struct {
	// Addr is "host:port".
	Addr string
	// Username and Password log in (AUTH); Username empty with a Password
	// is the default user (requirepass).
	Username, Password string
	// TLS, when set, encrypts the connection.
	TLS *tls.Config
}

// Apply sets the connection settings on r, a client's other options, and
// returns it.
func (o Options) Apply(r *redis.Options) *redis.Options {
	r.Addr, r.Username, r.Password, r.TLSConfig = o.Addr, o.Username, o.Password, o.TLS
	return r
}
