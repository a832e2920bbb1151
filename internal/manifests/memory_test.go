package manifests

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestMemoryLRU(t *testing.T) {
	ctx := context.Background()
	// Each entry is a one-byte key and a 9-byte value: 10 bytes.
	m := NewMemory(30, 0)
	put := func(k string) { m.Put(ctx, k, []byte("123456789")) }
	has := func(k string) bool { _, ok := m.Get(ctx, k); return ok }

	put("a")
	put("b")
	put("c")
	if !has("a") { // a is now the most recently used
		t.Fatal("a missing before the cache was full")
	}
	put("d") // evicts b, the least recently used
	if has("b") || !has("a") || !has("c") || !has("d") {
		t.Fatalf("after eviction: a=%v b=%v c=%v d=%v, want b evicted", has("a"), has("b"), has("c"), has("d"))
	}
	if m.Len() != 3 || m.Bytes() != 30 {
		t.Fatalf("Len=%d Bytes=%d, want 3 and 30", m.Len(), m.Bytes())
	}

	m.Put(ctx, "a", []byte("1")) // replacing shrinks
	if v, _ := m.Get(ctx, "a"); string(v) != "1" || m.Bytes() != 22 {
		t.Fatalf("replaced a = %q, Bytes=%d", v, m.Bytes())
	}
	m.Put(ctx, "huge", make([]byte, 100)) // larger than the cache: not stored
	if has("huge") || m.Len() != 3 {
		t.Fatalf("an oversized value was stored or evicted others: Len=%d", m.Len())
	}
}

func TestMemoryTTL(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1000, 0)
	m := NewMemory(0, time.Minute)
	m.now = func() time.Time { return now }

	m.Put(ctx, "k", []byte("v"))
	now = now.Add(59 * time.Second)
	if _, ok := m.Get(ctx, "k"); !ok {
		t.Fatal("miss before the TTL")
	}
	now = now.Add(time.Second)
	if _, ok := m.Get(ctx, "k"); ok {
		t.Fatal("hit after the TTL")
	}
	if m.Len() != 0 || m.Bytes() != 0 {
		t.Fatalf("expired entry kept: Len=%d Bytes=%d", m.Len(), m.Bytes())
	}
}

func TestMemoryConcurrent(t *testing.T) {
	ctx := context.Background()
	m := NewMemory(1000, time.Hour)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				k := fmt.Sprint(i % 40)
				if v, ok := m.Get(ctx, k); ok && string(v) != "value-"+k {
					t.Errorf("Get(%s) = %q", k, v)
					return
				}
				m.Put(ctx, k, []byte("value-"+k))
			}
		}()
	}
	wg.Wait()
	if m.Bytes() > 1000 {
		t.Fatalf("Bytes=%d over the limit", m.Bytes())
	}
}
