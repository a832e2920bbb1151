package main

import (
	"flag"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/flagenv"
	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/manifests"
	"github.com/ferry-gitops/ferry/internal/notify"
	"github.com/ferry-gitops/ferry/internal/webhook"
)

// manualPages are the pages of the manual that tell operators how to run
// the worker: every flag and FERRY_* variable their prose names must be
// one the worker has. The flags themselves, each with its variable, are
// the generated docs/reference/ferry-worker.md (TestWorkerReference).
var manualPages = []string{
	"../docs/operator-manual/worker.md",
	"../docs/operator-manual/regions-config.md",
	"../docs/operator-manual/repositories.md",
	"../docs/operator-manual/sandbox.md",
	"../docs/operator-manual/plugins.md",
	"../docs/operator-manual/customizations.md",
	"../docs/operator-manual/metrics.md",
	"../docs/user-guide/notifications.md",
}

// TestManualFlags checks the worker's pages of the manual against the flag
// set: every flag and FERRY_* variable they name exists, and the worker's
// page links to the generated flag reference rather than keeping a copy.
func TestManualFlags(t *testing.T) {
	fs := newFlagSet(&config{}, io.Discard)
	var flags []string
	fs.VisitAll(func(f *flag.Flag) { flags = append(flags, f.Name) })
	known := knownEnv(flags)
	for _, page := range manualPages {
		raw, err := os.ReadFile(page)
		require.NoError(t, err, "read %s", page)
		text := string(raw)
		for _, name := range flagNames(regexp.MustCompile(`(?:^|[^\w-])--([a-z][a-z0-9-]*)`), text) {
			if !slices.Contains(flags, name) {
				t.Errorf("%s names --%s, which ferry-worker does not have: fix the text", page, name)
			}
		}
		for _, m := range regexp.MustCompile(`FERRY_[A-Z0-9_]+`).FindAllString(text, -1) {
			if !known[m] {
				t.Errorf("%s names %s, which ferry-worker does not read: fix the text", page, m)
			}
		}
	}
	raw, err := os.ReadFile(manualPages[0])
	require.NoError(t, err)
	require.True(t, strings.Contains(string(raw), "](../reference/ferry-worker.md)"),
		"%s does not link to the flag reference, ../reference/ferry-worker.md", manualPages[0])
}

func flagNames(re *regexp.Regexp, text string) []string {
	var names []string
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		names = append(names, m[1])
	}
	return names
}

// knownEnv are the variables the worker reads: the flags' twins, the Git
// credentials and the webhook secrets.
func knownEnv(flags []string) map[string]bool {
	// As in FERRY_WEBHOOK_<PROVIDER>_SECRET and FERRY_NOTIFY_<KEY>, with
	// the notifications page's example of the latter.
	known := map[string]bool{"FERRY_WEBHOOK_": true, notify.EnvPrefix: true, notify.EnvName("slack-token"): true}
	for _, name := range flags {
		known[flagenv.EnvName("FERRY_", name)] = true
	}
	for _, name := range []string{gitsource.EnvToken, gitsource.EnvUsername, gitsource.EnvPassword,
		gitsource.EnvSSHKeyFile, gitsource.EnvKnownHosts, gitsource.EnvHosts, gitsource.EnvInsecure, manifests.EnvCacheKey} {
		known[name] = true
	}
	for _, p := range webhook.Providers {
		known[webhookSecretEnv(p)] = true
	}
	return known
}
