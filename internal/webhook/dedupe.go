package webhook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ferry-gitops/ferry/internal/redisconn"
)

// Deduper remembers deliveries for a while, so that a provider's retries
// and redeliveries refresh each app once.
type Deduper interface {
	// FirstSeen records key for ttl and reports whether it was new.
	FirstSeen(ctx context.Context, key string, ttl time.Duration) (bool, error)
	// Forget drops key, so that the next delivery of it is new again.
	Forget(ctx context.Context, key string)
}

// dedupeKey identifies a push: (repo, ref, after), or (repo, ref, before)
// for a deleted ref, so that deleting a recreated branch is news again.
func dedupeKey(p Push) string {
	sha := p.After
	if sha == "" {
		sha = "deleted:" + p.Before
	}
	h := sha256.Sum256([]byte(strings.Join(p.RepoKeys(), " ") + "\x00" + p.Ref + "\x00" + sha))
	return hex.EncodeToString(h[:16])
}

// MemoryDeduper is a Deduper in this process: each worker dedupes alone.
type MemoryDeduper struct {
	mu        sync.Mutex
	expiry    map[string]time.Time
	nextSweep time.Time
	now       func() time.Time
}

var _ Deduper = (*MemoryDeduper)(nil)

func NewMemoryDeduper() *MemoryDeduper {
	return &MemoryDeduper{expiry: map[string]time.Time{}, now: time.Now}
}

func (m *MemoryDeduper) FirstSeen(_ context.Context, key string, ttl time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if now.After(m.nextSweep) {
		for k, exp := range m.expiry {
			if !now.Before(exp) {
				delete(m.expiry, k)
			}
		}
		m.nextSweep = now.Add(time.Minute)
	}
	if exp, ok := m.expiry[key]; ok && now.Before(exp) {
		return false, nil
	}
	m.expiry[key] = now.Add(ttl)
	return true, nil
}

func (m *MemoryDeduper) Forget(_ context.Context, key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.expiry, key)
}

// redisDedupePrefix namespaces the keys in a Redis shared with others.
const redisDedupePrefix = "ferry:webhook:seen:"

// RedisDeduper is a Deduper in Redis (SET NX with a TTL), shared by every
// worker pointed at it. When Redis fails it falls back to remembering in
// this process, so a Redis outage costs duplicate refreshes at worst
// across workers, never a lost delivery.
type RedisDeduper struct {
	client   *redis.Client
	fallback *MemoryDeduper
	log      *slog.Logger
}

var _ Deduper = (*RedisDeduper)(nil)

// NewRedisDeduper returns a Deduper on the Redis server at addr
// ("host:port"); it does not connect until first used.
func NewRedisDeduper(addr string) *RedisDeduper {
	return NewRedisDeduperConn(redisconn.Options{Addr: addr})
}

// NewRedisDeduperConn is NewRedisDeduper with a login and TLS.
func NewRedisDeduperConn(conn redisconn.Options) *RedisDeduper {
	return &RedisDeduper{
		client: redis.NewClient(conn.Apply(&redis.Options{
			DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second,
			PoolTimeout: time.Second, MaxRetries: 1, DisableIdentity: true,
		})),
		fallback: NewMemoryDeduper(),
		log:      slog.Default(),
	}
}

func (r *RedisDeduper) FirstSeen(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	isNew, err := r.client.SetNX(ctx, redisDedupePrefix+key, 1, ttl).Result()
	if err != nil {
		r.log.Warn("webhook dedupe: Redis failed, deduplicating in this process", "error", err)
		return r.fallback.FirstSeen(ctx, key, ttl)
	}
	return isNew, nil
}

func (r *RedisDeduper) Forget(ctx context.Context, key string) {
	r.fallback.Forget(ctx, key)
	if err := r.client.Del(ctx, redisDedupePrefix+key).Err(); err != nil {
		r.log.Warn("webhook dedupe: forget in Redis failed", "error", err)
	}
}

// Close closes the Redis connections.
func (r *RedisDeduper) Close() error { return r.client.Close() }
