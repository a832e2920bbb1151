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
