package manifests

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ferry-gitops/ferry/internal/redisconn"
)

// TestRedisLogin: against a real redis-server with an ACL user, the cache
// works with the user's login and misses (never fails) without it.
func TestRedisLogin(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command("redis-server", "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", t.TempDir(), "--loglevel", "warning",
		"--requirepass", "default-pass", "--user", "ferry", "on", ">ferry-pass", "~ferry:*", "+get", "+set")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	ping := redis.NewClient(&redis.Options{Addr: addr, Password: "default-pass", DisableIdentity: true})
	defer ping.Close()
	for deadline := time.Now().Add(10 * time.Second); ping.Ping(context.Background()).Err() != nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("redis-server did not answer")
		}
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		conn redisconn.Options
		hit  bool
	}{
		{"ACL user", redisconn.Options{Addr: addr, Username: "ferry", Password: "ferry-pass"}, true},
		{"default user", redisconn.Options{Addr: addr, Password: "default-pass"}, true},
		{"no login", redisconn.Options{Addr: addr}, false},
		{"wrong password", redisconn.Options{Addr: addr, Username: "ferry", Password: "nope"}, false},
	} {
		c := NewRedisConn(tc.conn, time.Hour)
		c.Put(ctx, "k-"+tc.name, []byte("v"))
		v, ok := c.Get(ctx, "k-"+tc.name)
		c.Close()
		if ok != tc.hit || (ok && string(v) != "v") {
			t.Errorf("%s: Get = %q, %v; want hit=%v", tc.name, v, ok, tc.hit)
		}
	}
}
