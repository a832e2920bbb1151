package manifests

import "context"

// Cache holds encoded manifest sets by Key. It is only an optimisation:
// Get may miss at any time, and Put may drop a value. Implementations are
// safe for concurrent use, never fail the caller, and return values that
// callers must not modify.
type Cache interface {
	Get(ctx context.Context, key string) ([]byte, bool)
	Put(ctx context.Context, key string, val []byte)
}

var (
	_ Cache = (*Memory)(nil)
	_ Cache = (*Redis)(nil)
)

// get reads and decodes a cache entry; an unreadable one is a miss, and so
// is every entry for a hard load.
func (l *Loader) get(ctx context.Context, key string, hard bool) (*Loaded, header, bool) {
	if l.Cache == nil || hard {
		return nil, header{}, false
	}
	payload, ok := l.Cache.Get(ctx, key)
	if !ok {
		return nil, header{}, false
	}
	if l.Sealer != nil {
		var err error
		if payload, err = l.Sealer.Open(key, payload); err != nil {
			l.logger().WarnContext(ctx, "manifest cache: entry failed verification, rendering from git", "key", key, "err", err)
			return nil, header{}, false
		}
	}
	objs, h, err := decode(payload)
	if err != nil {
		l.logger().WarnContext(ctx, "manifest cache: unreadable entry, rendering again", "key", key, "err", err)
		return nil, header{}, false
	}
	return &Loaded{Digest: h.Digest, Objects: objs, Count: len(objs), SourceType: h.SourceType, CacheHit: true}, h, true
}

// put stores an encoded set, sealed when the Loader has a Sealer (and
// encrypted when it holds a Secret).
func (l *Loader) put(ctx context.Context, key string, payload []byte, secret bool) {
	if l.Cache == nil {
		return
	}
	if l.Sealer != nil {
		payload = l.Sealer.Seal(key, payload, secret)
	}
	l.Cache.Put(ctx, key, payload)
}
