package manifests

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"

	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/render"
)

// A source that fails to render for a reason in the commit itself (a
// limit, a file that does not parse, any render.IsUserError, a checkout
// over gitsource's limits) fails the same way every time: the Loader
// keeps the failure, as its message only, next to the sets, so that the
// next load of the same (repository, SHA, source, renderer version, limits)
// answers with it instead of checking out and rendering again. A bomb then
// costs one render, not one per attempt and poll. A new commit or spec is
// another key; a hard load renders again.

// failureFormat starts every failure entry; entries of another layout
// are a miss.
const failureFormat = "ferry-render-failure/1"

// failure is a failure entry.
type failure struct {
	Format string `json:"format"`
	// Msg is the error's message: no manifest content beyond what the
	// error already says (a render's errors come with every Secret value
	// the renderer met masked: render.Renderer.Render, MaskError).
	Msg string `json:"msg"`
}

// FailedError is a render failure remembered from an earlier load of the
// same source at the same commit.
type FailedError struct {
	Msg string
}

func (e *FailedError) Error() string { return e.Msg }

// IsFailed reports whether err is a remembered failure: as final as the
// error it remembers.
func IsFailed(err error) bool {
	var f *FailedError
	return errors.As(err, &f)
}

// deterministic reports whether err is a failure worth remembering: the
// same commit and source fail the same way every time.
func deterministic(err error) bool {
	return render.IsUserError(err) || gitsource.IsLimit(err)
}

// failureKey is the cache key of the failure entry for key: it adds the
// Loader's FailureTag, so that raising a limit renders again.
func (l *Loader) failureKey(key string) string {
	sum := sha256.Sum256([]byte("failure\x00" + key + "\x00" + l.FailureTag))
	return "failure-" + hex.EncodeToString(sum[:])
}

// failed gives the failure remembered under key, or nil; a hard load
// remembers none.
func (l *Loader) failed(ctx context.Context, key string, hard bool) error {
	if l.Cache == nil || hard {
		return nil
	}
	fkey := l.failureKey(key)
	payload, ok := l.Cache.Get(ctx, fkey)
	if !ok {
		return nil
	}
	if l.Sealer != nil {
		var err error
		if payload, err = l.Sealer.Open(fkey, payload); err != nil {
			l.logger().WarnContext(ctx, "manifest cache: failure entry failed verification, rendering from git", "key", fkey, "err", err)
			return nil
		}
	}
	var f failure
	if err := json.Unmarshal(payload, &f); err != nil || f.Format != failureFormat || f.Msg == "" {
		return nil
	}
	return &FailedError{Msg: f.Msg}
}

// remember keeps err under key when it is deterministic. The entry is
// sealed and encrypted like a set holding a Secret: an error may quote a
// line of the repository.
func (l *Loader) remember(ctx context.Context, key string, err error) {
	if l.Cache == nil || !deterministic(err) {
		return
	}
	payload, jerr := json.Marshal(failure{Format: failureFormat, Msg: err.Error()})
	if jerr != nil {
		return
	}
	fkey := l.failureKey(key)
	if l.Sealer != nil {
		payload = l.Sealer.Seal(fkey, payload, true)
	}
	l.Cache.Put(ctx, fkey, payload)
}
