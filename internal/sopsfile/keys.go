package sopsfile

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"

	"filippo.io/age"
)

// Keys are the age identities a worker decrypts SOPS files with. They
// print as their public recipients only (String, GoString), so that a
// Keys that ends up in a log line or an error shows no private key.
type Keys struct {
	ids        []age.Identity
	lines      []string // the identities as written, for Identities
	recipients []string
}

// identityHelp says what a line of a key file must be.
const identityHelp = "an age identity (AGE-SECRET-KEY-1…, as age-keygen writes it), a comment (#…) or empty"

// ReadKeyFile reads the age identities of the key file at path: the file
// SOPS_AGE_KEY_FILE names for the sops CLI, and that KSOPS users mount from
// their sops-age Secret (age-keygen's output, one identity a line, comments
// allowed). flag names the setting in errors, e.g. "--sops-age-key-file".
func ReadKeyFile(path, flag string) (*Keys, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", flag, path, err)
	}
	keys, err := ParseKeys(data)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", flag, path, err)
	}
	return keys, nil
}

// ParseKeys parses age identities, one a line. Errors name the lines that
// are not identities, all of them, never their contents.
func ParseKeys(data []byte) (*Keys, error) {
	k := &Keys{}
	var bad []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ids, err := age.ParseIdentities(strings.NewReader(line))
		if err != nil || len(ids) != 1 {
			// age's message may quote the line: a key, however mangled.
			bad = append(bad, fmt.Sprint(n))
			continue
		}
		k.ids = append(k.ids, ids[0])
		k.lines = append(k.lines, line)
		k.recipients = append(k.recipients, recipientOf(ids[0]))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read the age identities: %w", err)
	}
	switch {
	case len(bad) == 1:
		return nil, fmt.Errorf("line %s is not %s", bad[0], identityHelp)
	case len(bad) > 1:
		return nil, fmt.Errorf("lines %s are not %s", strings.Join(bad, ", "), identityHelp)
	case len(k.ids) == 0:
		return nil, fmt.Errorf("no age identity: write one per line, as age-keygen does (AGE-SECRET-KEY-1…)")
	}
	return k, nil
}

// recipientOf is the public recipient of an identity: what SOPS files
// name in sops.age[].recipient.
func recipientOf(id age.Identity) string {
	switch id := id.(type) {
	case *age.X25519Identity:
		return id.Recipient().String()
	case *age.HybridIdentity:
		return id.Recipient().String()
	}
	return "an age identity"
}

// Recipients are the public recipients of the identities, in file order.
func (k *Keys) Recipients() []string {
	if k == nil {
		return nil
	}
	return append([]string(nil), k.recipients...)
}

// Identities are the identities as written, one a line: what a render
// sandbox is sent on its standard input (never in its arguments or
// environment) to parse again with ParseKeys.
func (k *Keys) Identities() string {
	if k == nil {
		return ""
	}
	return strings.Join(k.lines, "\n")
}

// String names the keys by their recipients.
func (k *Keys) String() string {
	if k == nil || len(k.recipients) == 0 {
		return "no age identities"
	}
	return "age identities for " + strings.Join(k.recipients, ", ")
}

// GoString is String, for %#v.
func (k *Keys) GoString() string { return k.String() }

func generateX25519() (*age.X25519Identity, error) { return age.GenerateX25519Identity() }
