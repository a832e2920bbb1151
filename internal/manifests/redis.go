package manifests

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ferry-gitops/ferry/internal/redisconn"
)

// redisPrefix namespaces Ferry's keys in a Redis shared with others.
const redisPrefix = "ferry:manifests:"

// redisBackoff is how long a Redis that failed is left alone: a down Redis
// must cost one failed call per backoff, not one per load.
const redisBackoff = 5 * time.Second

// Redis is a Cache in Redis, shared by every worker pointed at it. Any
// Redis error is a miss or a skipped Put, logged at debug level, and makes
// the cache skip Redis for a few seconds: the caller renders from Git
// instead.
type Redis struct {
	client    *redis.Client
	ttl       time.Duration
	log       *slog.Logger
	backoff   time.Duration
	downUntil atomic.Int64 // unix nanoseconds
	now       func() time.Time
}

// NewRedis returns a cache on the Redis server at addr ("host:port"),
// keeping entries for ttl (no expiry when zero or less). It does not
// connect until first used. Timeouts are short: a slow Redis must cost less
// than a render.
func NewRedis(addr string, ttl time.Duration) *Redis {
	return NewRedisConn(redisconn.Options{Addr: addr}, ttl)
}

// NewRedisConn is NewRedis with a login and TLS.
func NewRedisConn(conn redisconn.Options, ttl time.Duration) *Redis {
	return &Redis{
		client: redis.NewClient(conn.Apply(&redis.Options{
			DialTimeout:        time.Second,
			DialerRetries:      1,
			DialerRetryTimeout: 50 * time.Millisecond,
			ReadTimeout:        2 * time.Second,
			WriteTimeout:       2 * time.Second,
			PoolTimeout:        2 * time.Second,
			MaxRetries:         -1,
			DisableIdentity:    true,
		})),
		ttl:     ttl,
		log:     slog.Default(),
		backoff: redisBackoff,
		now:     time.Now,
	}
}

func (r *Redis) Get(ctx context.Context, key string) ([]byte, bool) {
	if r.resting() {
		return nil, false
	}
	val, err := r.client.Get(ctx, redisPrefix+key).Bytes()
	if err != nil {
		if !errors.Is(err, redis.Nil) {
			r.failed(ctx, "get", err)
		}
		return nil, false
	}
	return val, true
}

func (r *Redis) Put(ctx context.Context, key string, val []byte) {
	if r.resting() {
		return
	}
	ttl := r.ttl
	if ttl < 0 {
		ttl = 0
	}
	if err := r.client.Set(ctx, redisPrefix+key, val, ttl).Err(); err != nil {
		r.failed(ctx, "put", err)
	}
}

// Close releases the connections.
func (r *Redis) Close() error { return r.client.Close() }

func (r *Redis) resting() bool { return r.now().UnixNano() < r.downUntil.Load() }

func (r *Redis) failed(ctx context.Context, op string, err error) {
	if ctx.Err() != nil {
		return // the caller gave up; Redis may be fine
	}
	r.downUntil.Store(r.now().Add(r.backoff).UnixNano())
	r.log.DebugContext(ctx, "manifest cache: redis "+op+" failed; skipping redis for a while and rendering from git",
		"err", err, "retry_in", r.backoff)
}
