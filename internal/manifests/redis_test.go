package manifests

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisServer is a real redis-server on a free loopback port, without
// persistence, stopped when the test ends.
type redisServer struct {
	addr string
	cmd  *exec.Cmd
}

func startRedis(t *testing.T) *redisServer {
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
	s := &redisServer{addr: fmt.Sprintf("127.0.0.1:%d", port)}
	s.cmd = exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", t.TempDir(), "--loglevel", "warning")
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.stop)
	s.waitReady(t)
	return s
}

// restartRedis starts redis-server again on addr.
func restartRedis(t *testing.T, addr string) *redisServer {
	t.Helper()
	_, port, _ := net.SplitHostPort(addr)
	s := &redisServer{addr: addr}
	s.cmd = exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", t.TempDir(), "--loglevel", "warning")
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.stop)
	s.waitReady(t)
	return s
}

func (s *redisServer) waitReady(t *testing.T) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.addr, DisableIdentity: true})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for c.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on %s did not answer PING", s.addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *redisServer) stop() {
	if s.cmd.ProcessState == nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
}

func (s *redisServer) flush(t *testing.T) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.addr, DisableIdentity: true})
	defer c.Close()
	if err := c.FlushAll(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
}

func TestRedis(t *testing.T) {
	srv := startRedis(t)
	ctx := context.Background()
	c := NewRedis(srv.addr, 500*time.Millisecond)
	defer c.Close()

	if _, ok := c.Get(ctx, "k"); ok {
		t.Fatal("hit on an empty Redis")
	}
	c.Put(ctx, "k", []byte("value"))
	if v, ok := c.Get(ctx, "k"); !ok || string(v) != "value" {
		t.Fatalf("Get = %q, %v", v, ok)
	}
	time.Sleep(700 * time.Millisecond)
	if _, ok := c.Get(ctx, "k"); ok {
		t.Fatal("hit after the TTL")
	}

	c.Put(ctx, "k", []byte("value"))
	srv.flush(t)
	if _, ok := c.Get(ctx, "k"); ok {
		t.Fatal("hit after FLUSHALL")
	}

	srv.stop()
	start := time.Now()
	for i := 0; i < 50; i++ {
		c.Put(ctx, "k", []byte("value"))
		if _, ok := c.Get(ctx, "k"); ok {
			t.Fatal("hit with Redis down")
		}
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("100 calls to a down Redis cost %s", d)
	}
}

func TestRedisComesBack(t *testing.T) {
	srv := startRedis(t)
	ctx := context.Background()
	c := NewRedis(srv.addr, 0)
	defer c.Close()
	// The backoff runs on the cache's clock, not on how long a restart of
	// Redis takes on a busy machine.
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	c.now = func() time.Time { return time.Unix(0, now.Load()) }
	c.backoff = 200 * time.Millisecond

	srv.stop()
	c.Put(ctx, "k", []byte("lost"))
	srv = restartRedis(t, srv.addr)
	c.Put(ctx, "k", []byte("skipped")) // within the backoff
	if _, ok := c.Get(ctx, "k"); ok {
		t.Fatal("Redis used within the backoff")
	}
	now.Add(int64(250 * time.Millisecond))
	c.Put(ctx, "k", []byte("value"))
	if v, ok := c.Get(ctx, "k"); !ok || string(v) != "value" {
		t.Fatalf("after the backoff: Get = %q, %v", v, ok)
	}
}
