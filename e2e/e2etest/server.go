package e2etest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ferry-gitops/ferry/internal/devenv"
	"github.com/stretchr/testify/require"
)

// Server is a ferry-server process of a test, and a client of its API as
// a curl script is one: plain HTTPS requests with a bearer token.
type Server struct {
	URL string
	// Audit is the audit log's file.
	Audit  string
	Log    string
	cmd    *exec.Cmd
	client *http.Client
}

// StartServer starts ferry-server against the stack's control cluster,
// on a free loopback port, and waits until it answers; it is stopped
// when the test ends.
func (e *Env) StartServer(t *testing.T, args ...string) *Server {
	t.Helper()
	require.NotEmpty(t, e.Stack.ControlContext, "ferry-server needs a stack with a control cluster")
	// The stack's reserved address, which its OIDC provider redirects to;
	// a stack without one gets a free port.
	addr := e.Stack.ServerListen
	if addr == "" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr = ln.Addr().String()
		require.NoError(t, ln.Close())
	}
	dir := t.TempDir()
	s := &Server{URL: "https://" + addr, Audit: filepath.Join(dir, "audit.jsonl"),
		Log: filepath.Join(e.Stack.LogDir, fmt.Sprintf("server-%s-%d.log", sanitize(t.Name()), time.Now().UnixNano())),
		// The server's certificate is self-signed: the test trusts it as
		// curl -k would; the TLS itself is real.
		client: &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}}
	all := append([]string{"--listen", addr, "--temporal-address", e.Stack.TemporalAddress, "--kubeconfig", e.Stack.Kubeconfig,
		"--control-context", e.Stack.ControlContext, "--control-namespace", e.Stack.ControlNamespace, "--audit-log", s.Audit,
		"--regions", strings.Join(e.regions(), ","), "--temporal-ui-url", e.Stack.TemporalUIURL}, args...)
	if e.Stack.RegionsConfig != "" && slices.Equal(e.regions(), e.Stack.Regions) {
		all = append(all, "--regions-config", e.Stack.RegionsConfig)
	}
	f, err := os.Create(s.Log)
	require.NoError(t, err)
	s.cmd = exec.Command(e.Bin(t, "ferry-server"), all...)
	s.cmd.Env = e.Environ()
	s.cmd.Stdout, s.cmd.Stderr = f, f
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	require.NoError(t, s.cmd.Start())
	t.Cleanup(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		_ = s.cmd.Wait()
		f.Close()
		if t.Failed() {
			t.Logf("ferry-server log %s ends:\n%s", s.Log, tail(s.Log, 40))
		}
	})
	Eventually(t, time.Minute, "ferry-server answers /api/version", func() (bool, string) {
		status, body := s.Do(t, "", "GET", "/api/version", nil)
		return status == http.StatusOK, fmt.Sprintf("%d %s; log: %s", status, body, tail(s.Log, 5))
	})
	return s
}

// Do sends a request with token as its bearer (none when empty) and body
// as JSON (none when nil); it returns the status and the body.
func (s *Server) Do(t testing.TB, token, method, path string, body any) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// MustDo is Do that requires the status want, and decodes the body into
// out (when not nil).
func (s *Server) MustDo(t testing.TB, token, method, path string, body any, want int, out any) {
	t.Helper()
	status, got := s.Do(t, token, method, path, body)
	require.Equal(t, want, status, "%s %s: %s", method, path, got)
	if out != nil {
		require.NoError(t, json.Unmarshal([]byte(got), out), "%s %s: %s", method, path, got)
	}
}

// Login logs in with a username and password and returns the token.
func (s *Server) Login(t testing.TB, username, password string) string {
	t.Helper()
	var out struct{ Token string }
	s.MustDo(t, "", "POST", "/api/v1/session", map[string]string{"username": username, "password": password}, http.StatusOK, &out)
	require.NotEmpty(t, out.Token)
	return out.Token
}

// AuditEntry is a line of the server's audit log.
type AuditEntry struct {
	User, Resource, Action, Object, Reason string
	Allowed                                bool
}

// AuditLog reads the audit log's lines.
func (s *Server) AuditLog(t testing.TB) []AuditEntry {
	t.Helper()
	f, err := os.Open(s.Audit)
	require.NoError(t, err)
	defer f.Close()
	var out []AuditEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e AuditEntry
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e), "audit line %s", sc.Text())
		out = append(out, e)
	}
	return out
}

// ControlKubectl runs kubectl against the control cluster's namespace of
// stack, with stdin, and returns its output; it fails the test on an
// error.
func ControlKubectl(t testing.TB, stack *devenv.Stack, stdin string, args ...string) string {
	t.Helper()
	out, err := ControlKubectlErr(stack, stdin, args...)
	require.NoError(t, err, "kubectl %s: %s", strings.Join(args, " "), out)
	return out
}

// ControlKubectlErr is ControlKubectl that returns the error.
func ControlKubectlErr(stack *devenv.Stack, stdin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	all := append([]string{"--kubeconfig", stack.Kubeconfig, "--context", stack.ControlContext, "-n", stack.ControlNamespace}, args...)
	cmd := exec.CommandContext(ctx, filepath.Join(stack.ToolsBin, "kubectl"), all...)
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// AdminPassword is the admin's first password, as an Argo CD user reads it
// from argocd-initial-admin-secret.
func AdminPassword(t testing.TB, stack *devenv.Stack) string {
	t.Helper()
	raw := ControlKubectl(t, stack, "", "get", "secret", "argocd-initial-admin-secret", "-o", "jsonpath={.data.password}")
	b, err := base64.StdEncoding.DecodeString(raw)
	require.NoError(t, err)
	return string(b)
}

// SSOConfig is an argocd-cm whose oidc.config names the stack's Dex, as
// an Argo CD operator writes it; its client secret is the one
// StoreSSOSecret keeps in argocd-secret.
func SSOConfig(stack *devenv.Stack) string {
	return fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm, namespace: argocd}
data:
  url: https://%s
  oidc.config: |
    name: Dex
    issuer: %s
    clientID: %s
    clientSecret: $oidc.dex.clientSecret
    requestedScopes: [openid, profile, email, groups]
`, stack.ServerListen, stack.OIDCIssuer, stack.OIDCClientID)
}

// StoreSSOSecret puts Dex's client secret in argocd-secret, which the
// server's first start made.
func StoreSSOSecret(t testing.TB, stack *devenv.Stack) {
	t.Helper()
	ControlKubectl(t, stack, "", "patch", "secret", "argocd-secret", "--type", "merge", "-p",
		fmt.Sprintf(`{"stringData":{"oidc.dex.clientSecret":%q}}`, stack.OIDCClientSecret))
}
