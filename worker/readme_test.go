package main

import (
	"flag"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pmezard/go-difflib/difflib"
	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/manifests"
	"github.com/ferry-gitops/ferry/internal/notify"
	"github.com/ferry-gitops/ferry/internal/webhook"
)

var update = flag.Bool("update", false, "rewrite the README's ferry-worker flag block from the flag set")

const (
	readmePath   = "../README.md"
	readmeFix    = "run `go test ./worker/ -run TestREADMEFlags -update` to write the block from the flag set"
	sectionTitle = "\n## ferry-worker\n"
)

// TestREADMEFlags checks the README's ferry-worker section against the flag
// set: its code block is the worker's usage text, and every flag and FERRY_*
// variable its prose names exists.
func TestREADMEFlags(t *testing.T) {
	raw, err := os.ReadFile(readmePath)
	require.NoError(t, err, "read %s", readmePath)
	readme := string(raw)
	start, end, blockStart, blockEnd := locate(t, readme)
	block := readme[blockStart:blockEnd]

	fs := newFlagSet(&config{}, io.Discard)
	want := usage(fs)
	if *update {
		readme = readme[:blockStart] + want + readme[blockEnd:]
		require.NoError(t, os.WriteFile(readmePath, []byte(readme), 0o644))
		return
	}

	var flags []string
	fs.VisitAll(func(f *flag.Flag) { flags = append(flags, f.Name) })
	listed := flagNames(regexp.MustCompile(`(?m)^\s+--([a-z][a-z0-9-]*)`), block)
	for _, name := range flags {
		if !slices.Contains(listed, name) {
			t.Errorf("README.md's ferry-worker flag block lacks --%s: %s", name, readmeFix)
		}
	}
	for _, name := range listed {
		if !slices.Contains(flags, name) {
			t.Errorf("README.md's ferry-worker flag block lists --%s, which ferry-worker does not have: %s", name, readmeFix)
		}
	}
	if block != want {
		diff, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A: difflib.SplitLines(block), B: difflib.SplitLines(want), FromFile: "README.md", ToFile: "ferry-worker -h", Context: 1,
		})
		t.Errorf("README.md's ferry-worker flag block is not the worker's usage: %s\n%s", readmeFix, diff)
	}

	prose := readme[start:blockStart] + readme[blockEnd:end]
	for _, name := range flagNames(regexp.MustCompile(`(?:^|[^\w-])--([a-z][a-z0-9-]*)`), prose) {
		if !slices.Contains(flags, name) {
			t.Errorf("README.md's ferry-worker section names --%s, which ferry-worker does not have: fix the text", name)
		}
	}
	known := knownEnv(flags)
	for _, m := range regexp.MustCompile(`FERRY_[A-Z0-9_]+`).FindAllString(prose, -1) {
		if !known[m] {
			t.Errorf("README.md's ferry-worker section names %s, which ferry-worker does not read: fix the text", m)
		}
	}
}

// locate finds the ferry-worker section and its first code block.
func locate(t *testing.T, readme string) (start, end, blockStart, blockEnd int) {
	t.Helper()
	start = strings.Index(readme, sectionTitle)
	require.True(t, start >= 0, "README.md has no %q section", strings.TrimSpace(sectionTitle))
	end = len(readme)
	if i := strings.Index(readme[start+len(sectionTitle):], "\n## "); i >= 0 {
		end = start + len(sectionTitle) + i
	}
	open := strings.Index(readme[start:end], "\n```\n")
	require.True(t, open >= 0, "README.md's ferry-worker section has no ``` block: add one and %s", readmeFix)
	blockStart = start + open + len("\n```\n")
	closing := strings.Index(readme[blockStart:end], "```\n")
	require.True(t, closing >= 0, "README.md's ferry-worker flag block is not closed")
	return start, end, blockStart, blockStart + closing
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
	// the README's example of the latter.
	known := map[string]bool{"FERRY_WEBHOOK_": true, notify.EnvPrefix: true, notify.EnvName("slack-token"): true}
	for _, name := range flags {
		known[envName(name)] = true
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
