package manifests

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/ferry-gitops/ferry/internal/localtree"
)

// A local sync (ferry app sync --local DIR) renders a tree that is in no
// Git repository: the CLI packs it (localtree) and puts it in the manifest
// cache the workers share, under the tree's digest, sealed and always
// encrypted (it may hold anything, Secrets in clear included); the sync
// request names the digest only. A Loader asked for Request.Local renders
// that tree as it would a checkout, with the app's source options.

// localKey is the cache key of the tree of digest.
func localKey(digest string) string { return "local:" + digest }

// localRevision stands for the tree in the keys of its rendered sets, in
// place of a commit SHA.
func localRevision(digest string) string { return "local-" + strings.TrimPrefix(digest, "sha256:") }

// LocalTreeError: the tree a local sync names cannot be read from the
// manifest cache. Another attempt will not find it either.
type LocalTreeError struct{ msg string }

func (e *LocalTreeError) Error() string { return e.msg }

// IsLocalTree reports whether err is a *LocalTreeError.
func IsLocalTree(err error) bool {
	var e *LocalTreeError
	return errors.As(err, &e)
}

// PutLocal puts a packed tree in cache, sealed with sealer and encrypted,
// and reads it back: a Cache never fails its caller, so only the read says
// whether the workers will find it.
func PutLocal(ctx context.Context, cache Cache, sealer *Sealer, tree *localtree.Tree) error {
	if cache == nil || sealer == nil {
		return errors.New("no manifest cache to put the local tree in: give the workers' Redis and their " + EnvCacheKey)
	}
	key := localKey(tree.Digest)
	cache.Put(ctx, key, sealer.Seal(key, tree.Archive, true))
	got, ok := cache.Get(ctx, key)
	if !ok {
		return errors.New("the manifest cache did not keep the local tree: is its Redis reachable, with room for " +
			fmt.Sprintf("%d KiB?", len(tree.Archive)>>10))
	}
	if back, err := sealer.Open(key, got); err != nil || !bytes.Equal(back, tree.Archive) {
		return fmt.Errorf("the local tree read back from the manifest cache differs from the one put (%v)", err)
	}
	return nil
}

// localTree reads the tree of digest from the cache and checks it.
func (l *Loader) localTree(ctx context.Context, digest string) ([]byte, error) {
	if l.Cache == nil || l.Sealer == nil {
		return nil, &LocalTreeError{"this worker has no shared manifest cache (--redis-addr and " + EnvCacheKey +
			"), where ferry app sync --local puts the local tree"}
	}
	key := localKey(digest)
	got, ok := l.Cache.Get(ctx, key)
	if !ok {
		return nil, &LocalTreeError{fmt.Sprintf("the local tree %.19s is not in the manifest cache (expired, or the CLI put it in another Redis): "+
			"sync again with ferry app sync --local", digest)}
	}
	archive, err := l.Sealer.Open(key, got)
	if err != nil {
		return nil, &LocalTreeError{fmt.Sprintf("the local tree %.19s in the manifest cache: %v (the CLI needs the workers' %s)", digest, err, EnvCacheKey)}
	}
	if localtree.Digest(archive) != digest {
		return nil, &LocalTreeError{fmt.Sprintf("the local tree in the manifest cache under %.19s has another digest", digest)}
	}
	return archive, nil
}

// checkoutLocal writes the tree of digest out as a checkout; release
// removes it.
func (l *Loader) checkoutLocal(ctx context.Context, digest string) (string, func(), error) {
	archive, err := l.localTree(ctx, digest)
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp("", "ferry-local-")
	if err != nil {
		return "", nil, err
	}
	release := func() { _ = os.RemoveAll(dir) }
	if err := localtree.Unpack(archive, dir); err != nil {
		release()
		return "", nil, &LocalTreeError{err.Error()}
	}
	return dir, release, nil
}
