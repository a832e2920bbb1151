package manifests

import (
	"bytes"
	"compress/gzip"
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/render"
)

func mustSealer(t *testing.T, secret string) (*Sealer, *atomic.Int64) {
	t.Helper()
	s, err := NewSealer([]byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	var failures atomic.Int64
	s.OnVerifyFailure = func() { failures.Add(1) }
	return s, &failures
}

func TestSealer(t *testing.T) {
	s, failures := mustSealer(t, "0123456789abcdef-one")
	other, _ := mustSealer(t, "0123456789abcdef-two")
	payload := []byte("the encoded set")
	for _, encrypt := range []bool{false, true} {
		entry := s.Seal("k", payload, encrypt)
		if got, err := s.Open("k", entry); err != nil || !bytes.Equal(got, payload) {
			t.Fatalf("encrypt=%v: Open = %q, %v", encrypt, got, err)
		}
		if encrypt == bytes.Contains(entry, payload) {
			t.Fatalf("encrypt=%v: the payload in clear in the entry: %v", encrypt, !encrypt)
		}
		tampered := bytes.Clone(entry)
		tampered[len(sealMagic)+3] ^= 1
		for name, open := range map[string]func() ([]byte, error){
			"other secret": func() ([]byte, error) { return other.Open("k", entry) },
			"other key":    func() ([]byte, error) { return s.Open("k2", entry) },
			"tampered":     func() ([]byte, error) { return s.Open("k", tampered) },
			"never sealed": func() ([]byte, error) { return s.Open("k", payload) },
			"truncated":    func() ([]byte, error) { return s.Open("k", entry[:len(sealMagic)+4]) },
		} {
			if got, err := open(); err == nil {
				t.Errorf("encrypt=%v, %s: Open = %q, want an error", encrypt, name, got)
			}
		}
	}
	if n := failures.Load(); n != 8 {
		t.Fatalf("verify failures counted: %d, want 8", n)
	}
	if _, err := NewSealer([]byte("short")); err == nil || !strings.Contains(err.Error(), "16") {
		t.Fatalf("NewSealer(short) = %v, want an error naming the minimum", err)
	}
}

// TestLoaderRefusesForgedEntry writes entries straight into a real Redis
// under the key a worker would read, as whoever can reach Redis can: an
// unsealed set with a valid digest, and one sealed with another secret.
// Neither is returned; the set renders again and the miss is counted.
func TestLoaderRefusesForgedEntry(t *testing.T) {
	srv := startRedis(t)
	cache := NewRedis(srv.addr, time.Hour)
	defer cache.Close()
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.addr, DisableIdentity: true})
	defer rdb.Close()

	sealer, failures := mustSealer(t, "shared-cache-key-0123456789")
	workerA, _, _ := newTestLoader(cache)
	workerB, _, renderB := newTestLoader(cache)
	workerA.Sealer, workerB.Sealer = sealer, sealer
	real := mustLoad(t, workerA, appSource)

	forged := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
		"metadata": map[string]any{"name": "pwned"},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
	}}
	payload, _, err := Encode(Set{forged})
	if err != nil {
		t.Fatal(err)
	}
	attacker, _ := mustSealer(t, "the-attacker-guesses-wrong")
	key := Key(testRepo, testSHA, appSource, render.Version)
	for i, entry := range [][]byte{payload, attacker.Seal(key, payload, false)} {
		if err := rdb.Set(ctx, redisPrefix+key, entry, 0).Err(); err != nil {
			t.Fatal(err)
		}
		before := renderB.calls.Load()
		got := mustLoad(t, workerB, appSource)
		if got.CacheHit || got.Digest != real.Digest || kinds(got.Objects) != wantObjects {
			t.Fatalf("forged entry %d: hit=%v digest=%s objects=%q, want the set rendered from the source", i, got.CacheHit, got.Digest, kinds(got.Objects))
		}
		if renderB.calls.Load() != before+1 {
			t.Fatalf("forged entry %d: not rendered again", i)
		}
		if n := failures.Load(); n != int64(i+1) {
			t.Fatalf("forged entry %d: %d verify failures counted, want %d", i, n, i+1)
		}
	}
	if !mustLoad(t, workerA, appSource).CacheHit {
		t.Fatal("the re-render did not replace the forged entry")
	}
}

// TestLoaderEncryptsSecrets: a set holding a Secret is in Redis encrypted.
func TestLoaderEncryptsSecrets(t *testing.T) {
	srv := startRedis(t)
	cache := NewRedis(srv.addr, time.Hour)
	defer cache.Close()
	const value = "c3VwZXItc2VjcmV0LXBhc3N3b3Jk"
	secret := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "db", "namespace": "shop"},
		"data": map[string]any{"password": value},
	}}
	sealer, _ := mustSealer(t, "shared-cache-key-0123456789")
	l := &Loader{Repos: &fakeRepos{}, Cache: cache, Sealer: sealer, RendererVersion: render.Version,
		Render: func(context.Context, string, app.Source, render.Options) (*render.Result, error) {
			return &render.Result{Objects: Set{secret.DeepCopy()}, SourceType: render.SourceTypeDirectory}, nil
		}}
	first := mustLoad(t, l, appSource)
	rdb := redis.NewClient(&redis.Options{Addr: srv.addr, DisableIdentity: true})
	defer rdb.Close()
	raw, err := rdb.Get(context.Background(), redisPrefix+Key(testRepo, testSHA, appSource, render.Version)).Bytes()
	if err != nil {
		t.Fatal(err)
	}
	body := raw[len(sealMagic)+1:]
	if raw[len(sealMagic)] != sealEncrypted {
		t.Fatal("a set with a Secret is stored unencrypted")
	}
	if _, err := gzip.NewReader(bytes.NewReader(body)); err == nil || bytes.Contains(raw, []byte(value)) {
		t.Fatal("the Secret's set is readable in Redis")
	}
	if second := mustLoad(t, l, appSource); !second.CacheHit || second.Digest != first.Digest {
		t.Fatalf("the encrypted entry does not read back: hit=%v", second.CacheHit)
	}
}
