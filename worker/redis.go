package main

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/ferry-gitops/ferry/internal/clienttls"
	"github.com/ferry-gitops/ferry/internal/manifests"
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

// newSealer authenticates the manifest cache's entries with
// FERRY_CACHE_KEY. Without it a worker seals with a random key of its own:
// still safe (no forged entry is read), but a Redis shared with other
// workers is then of no use to it, so it says so loudly.
func newSealer(cfg *config, onFailure func()) (*manifests.Sealer, error) {
	secret := os.Getenv(manifests.EnvCacheKey)
	var s *manifests.Sealer
	if secret == "" {
		if cfg.redisAddr != "" {
			slog.Warn("manifest cache: " + manifests.EnvCacheKey + " is not set, so this worker seals its cache entries with a random key " +
				"of its own: no other worker can use what it writes to Redis, nor it theirs, and every region re-renders from Git. " +
				"Give every worker sharing this Redis the same " + manifests.EnvCacheKey + " (e.g. openssl rand -hex 32)")
		}
		s = manifests.NewRandomSealer()
	} else {
		var err error
		if s, err = manifests.NewSealer([]byte(secret)); err != nil {
			return nil, fmt.Errorf("%s: %w", manifests.EnvCacheKey, err)
		}
	}
	s.OnVerifyFailure = onFailure
	return s, nil
}
