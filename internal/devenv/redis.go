package devenv

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

const redisTimeout = 30 * time.Second

// startRedis runs redis-server on a loopback port without persistence.
func startRedis(ctx context.Context, stateDir string, env []string, port int) (*proc, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server is not installed (apt-get install -y redis-server): %w", err)
	}
	dir := filepath.Join(stateDir, "redis")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("redis: %w", err)
	}
	p, err := startProc("redis", filepath.Join(stateDir, "logs"), dir, env, bin,
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--dir", dir,
	)
	if err != nil {
		return nil, err
	}
	addr := hostPort(port)
	return p, p.waitReady(ctx, "redis-server", redisTimeout, func(ctx context.Context) error {
		return redisPing(ctx, addr)
	})
}

// redisPing sends PING in the inline protocol and expects +PONG.
func redisPing(ctx context.Context, addr string) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "+PONG" {
		return fmt.Errorf("redis PING answered %q", strings.TrimSpace(line))
	}
	return nil
}
