package bench

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// server is a ferry-server process on the stack's control cluster, as
// e2etest.StartServer runs it: HTTPS with its self-signed certificate on
// a loopback port.
type server struct {
	URL, Log string
	cmd      *exec.Cmd
	done     chan struct{}
}

// startServer starts ferry-server (BinDir/ferry-server) against the
// stack's Temporal and control cluster and waits until it answers.
func (e *Env) startServer(ctx context.Context) (*server, error) {
	s := e.Stack
	if s.ControlContext == "" {
		return nil, errors.New("ferry-server needs a stack with a control cluster")
	}
	addr := s.ServerListen // the stack's reserved address, when it has one
	if addr == "" {
		var err error
		if addr, err = freeAddr(); err != nil {
			return nil, err
		}
	}
	logDir := filepath.Join(e.Cfg.Out, "logs")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, err
	}
	srv := &server{URL: "https://" + addr, Log: filepath.Join(logDir, "server-ui.log"), done: make(chan struct{})}
	args := []string{"--listen", addr, "--temporal-address", s.TemporalAddress, "--namespace", s.Namespace,
		"--kubeconfig", s.Kubeconfig, "--control-context", s.ControlContext, "--control-namespace", s.ControlNamespace,
		"--audit-log", filepath.Join(e.Dir, "audit.jsonl"), "--regions", strings.Join(s.Regions, ",")}
	if s.RegionsConfig != "" {
		args = append(args, "--regions-config", s.RegionsConfig)
	}
	logFile, err := os.Create(srv.Log)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child holds its own descriptor
	srv.cmd = exec.Command(filepath.Join(e.Cfg.BinDir, "ferry-server"), args...)
	srv.cmd.Env = s.Environ()
	srv.cmd.Stdout, srv.cmd.Stderr = logFile, logFile
	srv.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := srv.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start ferry-server: %w", err)
	}
	go func() { _ = srv.cmd.Wait(); close(srv.done) }()
	e.cleanups = append(e.cleanups, srv.stop)

	// Its certificate is self-signed: trusted here as curl -k would.
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	for deadline := time.Now().Add(time.Minute); ; {
		resp, err := hc.Get(srv.URL + "/api/version")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return srv, nil
			}
		}
		select {
		case <-srv.done:
			return nil, fmt.Errorf("ferry-server exited at start: see %s", srv.Log)
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("ferry-server does not answer /api/version after a minute: see %s", srv.Log)
		}
	}
}

func (srv *server) stop() {
	select {
	case <-srv.done:
		return
	default:
	}
	_ = srv.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-srv.done:
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(-srv.cmd.Process.Pid, syscall.SIGKILL)
		<-srv.done
	}
}

// adminPassword is the admin's first password, which the server's first
// start wrote into argocd-initial-admin-secret, as an Argo CD user reads it.
func (e *Env) adminPassword(ctx context.Context) (string, error) {
	cfg, err := e.Stack.RestConfig(e.Stack.ControlContext)
	if err != nil {
		return "", err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		sec, err := cs.CoreV1().Secrets(e.Stack.ControlNamespace).Get(ctx, "argocd-initial-admin-secret", metav1.GetOptions{})
		if err == nil && len(sec.Data["password"]) > 0 {
			return string(sec.Data["password"]), nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return "", fmt.Errorf("the admin's password (argocd-initial-admin-secret): %v", err)
		}
		sleep(ctx, 500*time.Millisecond)
	}
}
