package devenv

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

const postgresTimeout = 60 * time.Second

// postgresUser owns the Temporal databases; its password is random per
// stack and is passed to the tools through the environment, never argv.
const postgresUser = "temporal"

// postgres is a PostgreSQL server of Debian's postgresql package, on a data
// dir in the state dir and a loopback port, without a Unix socket.
type postgres struct {
	binDir, dataDir, logDir string
	env                     []string
	port                    int
	password                string
	p                       *proc
}

// postgresBinDir finds the newest PostgreSQL server installed the Debian
// way (/usr/lib/postgresql/<version>/bin), else initdb on PATH.
func postgresBinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	dirs = slices.DeleteFunc(dirs, func(d string) bool {
		_, err := os.Stat(filepath.Join(d, "initdb"))
		return err != nil
	})
	if len(dirs) > 0 {
		version := func(d string) int { v, _ := strconv.Atoi(filepath.Base(filepath.Dir(d))); return v }
		slices.SortFunc(dirs, func(a, b string) int { return version(a) - version(b) })
		return dirs[len(dirs)-1], nil
	}
	if initdb, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(initdb), nil
	}
	return "", fmt.Errorf("PostgreSQL is not installed (no /usr/lib/postgresql/<version>/bin/initdb): apt-get install -y postgresql")
}

func (pg *postgres) address() string { return hostPort(pg.port) }

// start initializes the data dir unless it exists (a restart keeps it),
// then runs the server and waits until it accepts connections.
func (pg *postgres) start(ctx context.Context) error {
	attr, err := unprivilegedProcAttr()
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	if _, err := os.Stat(filepath.Join(pg.dataDir, "PG_VERSION")); err != nil {
		if err := os.MkdirAll(filepath.Dir(pg.dataDir), 0o700); err != nil {
			return fmt.Errorf("postgres: %w", err)
		}
		pwFile := pg.dataDir + ".pw"
		if err := os.WriteFile(pwFile, []byte(pg.password+"\n"), 0o600); err != nil {
			return fmt.Errorf("postgres: %w", err)
		}
		initdb, err := startProcAttr("postgres-initdb", pg.logDir, filepath.Dir(pg.dataDir), pg.env, attr,
			filepath.Join(pg.binDir, "initdb"),
			"--pgdata", pg.dataDir, "--username", postgresUser, "--pwfile", pwFile,
			"--auth", "scram-sha-256", "--encoding", "UTF8", "--locale", "C")
		if err != nil {
			return fmt.Errorf("postgres: %w", err)
		}
		<-initdb.done
		_ = os.Remove(pwFile)
		if initdb.err != nil {
			return fmt.Errorf("postgres: initdb failed (%v): see %s, which ends:\n%s", initdb.err, initdb.logPath, lastLines(initdb.logPath, 5))
		}
	}
	p, err := startProcAttr("postgres", pg.logDir, pg.dataDir, pg.env, attr,
		filepath.Join(pg.binDir, "postgres"),
		"-D", pg.dataDir,
		"-c", "listen_addresses=127.0.0.1",
		"-c", "port="+strconv.Itoa(pg.port),
		"-c", "unix_socket_directories=",
		// Four Temporal services with a pool each, and the SQL tool.
		"-c", "max_connections=200",
		// A dev stack trades the last commits before a machine crash for
		// speed; a crash never corrupts the data.
		"-c", "synchronous_commit=off",
	)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	pg.p = p
	return p.waitReady(ctx, "PostgreSQL", postgresTimeout, func(ctx context.Context) error {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", pg.address())
		if err != nil {
			return err
		}
		conn.Close()
		return pg.ready(ctx)
	})
}

// ready asks the server itself, as a client would, whether it accepts
// connections (pg_isready: a listening port is not enough while it recovers).
func (pg *postgres) ready(ctx context.Context) error {
	out, err := exec.CommandContext(ctx, filepath.Join(pg.binDir, "pg_isready"),
		"-h", "127.0.0.1", "-p", strconv.Itoa(pg.port), "-U", postgresUser, "-d", "postgres").CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_isready: %s", strings.TrimSpace(string(out)))
	}
	return nil
}

func (pg *postgres) stop() error {
	if pg.p == nil {
		return nil
	}
	// SIGTERM is PostgreSQL's smart shutdown; it ends once the clients
	// have gone, which Temporal's services have by now.
	return pg.p.stop(2 * stopGrace)
}
