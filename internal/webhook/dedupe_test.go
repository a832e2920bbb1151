package webhook

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestMemoryDeduper(t *testing.T) {
	m := NewMemoryDeduper()
	now := time.Unix(1000, 0)
	m.now = func() time.Time { return now }
	testDeduper(t, m, func(d time.Duration) { now = now.Add(d) })
	for i := range 100 {
		_, _ = m.FirstSeen(context.Background(), fmt.Sprint(i), time.Minute)
	}
	now = now.Add(2 * time.Minute)
	_, _ = m.FirstSeen(context.Background(), "new", time.Minute)
	if len(m.expiry) != 1 {
		t.Fatalf("%d keys kept after they expired, want 1", len(m.expiry))
	}
}

// TestRedisDeduper runs against a real redis-server; when it goes away the
// deduper falls back to this process.
func TestRedisDeduper(t *testing.T) {
	if testing.Short() {
		t.Skip("needs redis-server")
	}
	addr, stop := startRedis(t)
	d := NewRedisDeduper(addr)
	defer d.Close()
	testDeduper(t, d, time.Sleep)

	// Two deduplicators on one Redis are one memory.
	other := NewRedisDeduper(addr)
	defer other.Close()
	ctx := context.Background()
	if isNew, err := d.FirstSeen(ctx, "shared", time.Minute); !isNew || err != nil {
		t.Fatalf("first: %v %v", isNew, err)
	}
	if isNew, _ := other.FirstSeen(ctx, "shared", time.Minute); isNew {
		t.Fatal("another worker saw the key as new")
	}

	stop()
	for i, want := range []bool{true, false} {
		isNew, err := d.FirstSeen(ctx, "while-down", time.Minute)
		if err != nil || isNew != want {
			t.Fatalf("Redis down, delivery %d: new %v (%v), want %v", i, isNew, err, want)
		}
	}
}

func testDeduper(t *testing.T, d Deduper, wait func(time.Duration)) {
	t.Helper()
	ctx := context.Background()
	seen := func(key string, ttl time.Duration) bool {
		isNew, err := d.FirstSeen(ctx, key, ttl)
		if err != nil {
			t.Fatal(err)
		}
		return !isNew
	}
	if seen("a", 300*time.Millisecond) {
		t.Fatal("a new key was seen")
	}
	if !seen("a", 300*time.Millisecond) {
		t.Fatal("a repeated key was new")
	}
	if seen("b", time.Minute) {
		t.Fatal("another key was seen")
	}
	d.Forget(ctx, "b")
	if seen("b", time.Minute) {
		t.Fatal("a forgotten key was seen")
	}
	wait(400 * time.Millisecond)
	if seen("a", time.Minute) {
		t.Fatal("an expired key was seen")
	}
}

// startRedis starts redis-server on a free loopback port, without
// persistence; stop kills it (also at the end of the test).
func startRedis(t *testing.T) (addr string, stop func()) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatal("redis-server not found: install Debian's redis-server package")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	addr = fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", t.TempDir(), "--loglevel", "warning")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop = func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}
	t.Cleanup(stop)
	c := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for c.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on %s did not answer PING", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return addr, stop
}
