package devenv

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Env returns the stack's variables, as DIR/env exports them; PATH is the
// tools bin dir in front of this process's PATH.
func (s *Stack) Env() map[string]string {
	env := map[string]string{
		"TEMPORAL_ADDRESS":       s.TemporalAddress,
		"FERRY_TEMPORAL_ADDRESS": s.TemporalAddress,
		"TEMPORAL_NAMESPACE":     s.Namespace,
		"TEMPORAL_UI_URL":        s.TemporalUIURL,
		"FERRY_REGIONS":          strings.Join(s.Regions, ","),
		"KUBECONFIG":             s.Kubeconfig,
		"REDIS_ADDR":             s.RedisAddr,
		"FERRY_REDIS_ADDR":       s.RedisAddr,
		"FERRY_CACHE_KEY":        s.CacheKey,
		"FERRY_GIT_URL":          s.GitURL,
		"FERRY_TOOLS_BIN":        s.ToolsBin,
		"FERRY_STATE_DIR":        s.StateDir,
		"FERRY_HELM_REPO_URL":    s.HelmRepoURL,
		"FERRY_OCI_REGISTRY":     s.OCIRegistry,
		"FERRY_SERVER_LISTEN":    s.ServerListen,
		// The stack's own servers are on loopback, which a worker's host
		// policy refuses unless listed.
		"FERRY_RENDER_ALLOW_HOSTS": s.RenderAllowHosts(),
		"PATH":                     s.ToolsBin + string(os.PathListSeparator) + os.Getenv("PATH"),
	}
	if s.HelmRepoUsername != "" {
		env["FERRY_HELM_REPO_USERNAME"] = s.HelmRepoUsername
		env["FERRY_HELM_REPO_PASSWORD"] = s.HelmRepoPassword
	}
	if s.OIDCIssuer != "" {
		env["FERRY_OIDC_ISSUER"] = s.OIDCIssuer
		env["FERRY_OIDC_CLIENT_ID"] = s.OIDCClientID
		env["FERRY_OIDC_CLIENT_SECRET"] = s.OIDCClientSecret
	}
	if s.SMTPAddr != "" {
		env["FERRY_SMTP_ADDR"] = s.SMTPAddr
		env["FERRY_MAILPIT_URL"] = s.MailpitURL
	}
	if s.RegionsConfig != "" {
		env["FERRY_REGIONS_CONFIG"] = s.RegionsConfig
	}
	if s.ControlContext != "" {
		env["FERRY_CONTROL_CONTEXT"] = s.ControlContext
		env["FERRY_CONTROL_NAMESPACE"] = s.ControlNamespace
	}
	return env
}

// RenderAllowHosts lists the stack's Git server, Helm repository and OCI
// registry (host:port each, comma-separated) for a worker's
// --render-allow-hosts: they listen on loopback.
func (s *Stack) RenderAllowHosts() string {
	var hosts []string
	for _, raw := range []string{s.GitURL, s.HelmRepoURL, s.OCIRegistry} {
		if raw == "" {
			continue
		}
		if !strings.Contains(raw, "://") {
			raw = "oci://" + raw
		}
		if u, err := url.Parse(raw); err == nil && u.Host != "" && !slices.Contains(hosts, u.Host) {
			hosts = append(hosts, u.Host)
		}
	}
	return strings.Join(hosts, ",")
}

// Environ is os.Environ with the stack's variables set, for a child process
// that should use the stack (a worker under test, kubectl, temporal).
func (s *Stack) Environ() []string {
	vars := s.Env()
	out := make([]string, 0, len(os.Environ())+len(vars))
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !has(vars, k) {
			out = append(out, kv)
		}
	}
	for _, k := range sortedKeys(vars) {
		out = append(out, k+"="+vars[k])
	}
	return out
}

// EnvFile is DIR/env's content: `export` lines that sh can source. PATH puts
// the tools bin dir in front of the PATH of the shell that sources it.
func (s *Stack) EnvFile() string {
	var b strings.Builder
	b.WriteString("# ferry dev stack: . this file to use it\n")
	vars := s.Env()
	for _, k := range sortedKeys(vars) {
		if k == "PATH" {
			continue
		}
		fmt.Fprintf(&b, "export %s=%s\n", k, shQuote(vars[k]))
	}
	fmt.Fprintf(&b, "export PATH=%s:\"$PATH\"\n", shQuote(s.ToolsBin))
	return b.String()
}

// WriteEnv writes EnvFile to path atomically: a reader never sees half a file.
func (s *Stack) WriteEnv(path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".env-*")
	if err != nil {
		return fmt.Errorf("write env file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(s.EnvFile()); err != nil {
		tmp.Close()
		return fmt.Errorf("write env file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write env file: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write env file: %w", err)
	}
	return nil
}

// shQuote quotes s for sh: single quotes, with ' written as '\”.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func has(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}
