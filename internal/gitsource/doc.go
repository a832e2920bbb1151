// Package gitsource reads Application sources from remote Git repositories
// with go-git: it resolves a targetRevision to a commit SHA and checks a
// commit out into a directory for rendering.
//
// Both are shared by every Application of a worker. Resolve lists a
// repository's refs (ls-remote) once per Options.RefsTTL, however many
// Applications ask, and joins concurrent callers onto one network call;
// MaxAge sets that reuse per call (a timer poll passes its poll interval,
// so a repository is listed at most once per interval per worker);
// ForceRefresh asks for a listing newer than the call. Package gittest
// serves repositories over HTTP for tests. Checkout keeps one
// bare clone per repository under Options.CacheDir, named by the SHA-256 of
// the normalised URL, fetches only when a commit is missing, writes each
// commit's files into a directory shared by its holders until released,
// wipes and re-clones a clone found corrupt, and evicts the least recently
// used clones beyond Options.MaxClones. RevisionMetadata reads a commit's
// author, date, message and tags from the same clone.
//
// Credentials come from an AuthProvider (EnvAuth reads FERRY_GIT_* variables)
// or from the URL; they are never written to the clone's config and are
// removed from every error.
//
//	repos, err := gitsource.New(gitsource.Options{CacheDir: dir, Auth: auth})
//	sha, err := repos.Resolve(ctx, "https://github.com/org/repo.git", "main")
//	tree, release, err := repos.Checkout(ctx, "https://github.com/org/repo.git", sha)
//	defer release()
package gitsource
