package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/localtree"
	"github.com/ferry-gitops/ferry/internal/manifests"
	"github.com/ferry-gitops/ferry/internal/pipeline"
	"github.com/ferry-gitops/ferry/internal/redisconn"
)

// localFlags are argocd app sync's --local and --local-repo-root, and the
// workers' manifest cache the tree goes through.
type localFlags struct {
	dir, root, redisAddr string
}

func (f *localFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.dir, "local", "", "sync the manifests in this directory instead of Git's (uncommitted changes), rendered by the workers with the app's source options; refused with automated sync")
	fl.StringVar(&f.root, "local-repo-root", "", "the directory --local's files may reach (Kustomize bases, Helm value files); default --local itself")
	fl.StringVar(&f.redisAddr, "redis-addr", firstEnv("", "FERRY_REDIS_ADDR", "REDIS_ADDR"),
		"with --local: the workers' Redis (host:port), where the directory goes, with their FERRY_CACHE_KEY (env FERRY_REDIS_ADDR or REDIS_ADDR)")
}

// localTakeTime is how long the workers' cache keeps a tree: it is rendered
// at once, and again only by a region that lacks its set.
const localTakeTime = 24 * time.Hour

// prepareLocal packs --local and puts it in the workers' manifest cache,
// naming it in req; it refuses up front what the app or the connection
// cannot take, before anything is sent.
func (f *localFlags) prepareLocal(ctx context.Context, tf *temporalFlags, names []string, req *contract.SyncRequest, out io.Writer) error {
	if f.dir == "" {
		if f.root != "" {
			return errors.New("--local-repo-root is given without --local DIR")
		}
		return nil
	}
	if len(names) != 1 {
		return fmt.Errorf("--local syncs one app, not %d: name it alone", len(names))
	}
	name := names[0]
	if req.Revision != "" {
		return fmt.Errorf("app %q: give --local or --revision, not both", name)
	}
	if a, err := door(); err != nil || a != nil {
		if err != nil {
			return err
		}
		return fmt.Errorf("app %q: ferry-server (%s) does not take --local: the tree goes to the workers' manifest cache, which the server does not reach, "+
			"and never through the API; run ferry logout and sync with Temporal and the workers' Redis (operators), or commit the manifests", name, a.sc.Server)
	}
	v, err := tf.queryOnce(ctx, name)
	if err != nil {
		return err
	}
	if err := errors.Join(app.LocalSyncProblems(&v.Application, req.DryRun)...); err != nil {
		return fmt.Errorf("app %q: local sync: %w", name, err)
	}
	tree, err := localtree.Pack(f.root, f.dir)
	if err != nil {
		return fmt.Errorf("app %q: --local: %w", name, err)
	}
	if err := f.put(ctx, tree); err != nil {
		return fmt.Errorf("app %q: --local: %w", name, err)
	}
	req.Local = &contract.LocalSource{Digest: tree.Digest, Path: tree.Path}
	fmt.Fprintf(out, "local manifests %s (%d files, %s of the tree) sent to the workers' manifest cache\n", shortDigest(tree.Digest), tree.Files, tree.Path)
	return nil
}

// put puts the tree in the workers' manifest cache, sealed with their key.
func (f *localFlags) put(ctx context.Context, tree *localtree.Tree) error {
	key := os.Getenv(manifests.EnvCacheKey)
	if f.redisAddr == "" || key == "" {
		return fmt.Errorf("a local sync hands the directory to the workers through their manifest cache: give --redis-addr (or REDIS_ADDR) and %s, "+
			"as the workers have them (a worker without --redis-addr keeps its cache in its own process, and cannot take a local sync)", manifests.EnvCacheKey)
	}
	cache := pipeline.Cache{Key: key, KeyRequired: true, TTL: localTakeTime,
		Redis: &redisconn.Options{Addr: f.redisAddr, Username: os.Getenv("FERRY_REDIS_USERNAME"), Password: os.Getenv("FERRY_REDIS_PASSWORD")}}
	c, sealer, err := cache.Open()
	if err != nil {
		return err
	}
	if closer, ok := c.(io.Closer); ok {
		defer closer.Close()
	}
	if err := manifests.PutLocal(ctx, c, sealer, tree); err != nil {
		return fmt.Errorf("redis %s: %w", f.redisAddr, err)
	}
	return nil
}

// shortDigest is a tree's digest as people read it: sha256: and 12 digits.
func shortDigest(d string) string {
	if len(d) > len("sha256:")+12 {
		return d[:len("sha256:")+12]
	}
	return d
}

// localLabel is how ferry app get and history show a local sync's source.
func localLabel(digest string) string { return "local manifests " + shortDigest(digest) }
