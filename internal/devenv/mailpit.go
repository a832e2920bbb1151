package devenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sync/errgroup"
)

// Mailpit is the stack's SMTP server: email notifications land in its
// mailbox, which its HTTP API (and web UI) show. It takes any username and
// password over plain SMTP, so that a service.email with credentials works
// against it as against a real server.
const mailpitTimeout = 30 * time.Second

// startMailpit runs the tools bin dir's mailpit with SMTP on smtpPort and
// its HTTP API on httpPort, its mailbox under DIR/mailpit, and returns once
// the API answers.
func startMailpit(ctx context.Context, stateDir, toolsBin string, env []string, smtpPort, httpPort int) (*proc, error) {
	dir := filepath.Join(stateDir, "mailpit")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("mailpit: %w", err)
	}
	p, err := startProc("mailpit", filepath.Join(stateDir, "logs"), dir, env, filepath.Join(toolsBin, "mailpit"),
		"--smtp", hostPort(smtpPort), "--listen", hostPort(httpPort), "--database", filepath.Join(dir, "mailpit.db"),
		"--smtp-auth-accept-any", "--smtp-auth-allow-insecure", "--disable-version-check")
	if err != nil {
		return nil, err
	}
	return p, p.waitReady(ctx, "mailpit", mailpitTimeout, answersOK(mailpitURL(httpPort)+"/readyz"))
}

func mailpitURL(port int) string { return "http://" + hostPort(port) }

// hasMailpit reports whether the tools bin dir holds mailpit: a tools cache
// built before hack/tools.sh built it has none, and its stack runs without.
func hasMailpit(toolsBin string) bool {
	_, err := os.Stat(filepath.Join(toolsBin, "mailpit"))
	return err == nil
}

// goStartMailpit starts Mailpit in g, if the tools bin dir has it, and fills
// the stack's SMTPAddr and MailpitURL.
func (s *Stack) goStartMailpit(ctx context.Context, g *errgroup.Group, env []string, smtpPort, httpPort int) {
	if !hasMailpit(s.ToolsBin) {
		s.logf("no mailpit in %s: the stack runs without an SMTP server (hack/tools.sh builds it)", s.ToolsBin)
		return
	}
	s.SMTPAddr, s.MailpitURL = hostPort(smtpPort), mailpitURL(httpPort)
	g.Go(func() error {
		t := time.Now()
		p, err := startMailpit(ctx, s.StateDir, s.ToolsBin, env, smtpPort, httpPort)
		s.mu.Lock()
		s.mailpit = p
		s.mu.Unlock()
		if err == nil {
			s.logf("mailpit: ready after %s (SMTP %s, API %s)", since(t), s.SMTPAddr, s.MailpitURL)
		}
		return err
	})
}
