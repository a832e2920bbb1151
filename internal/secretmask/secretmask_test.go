package secretmask

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestMaskEveryForm(t *testing.T) {
	const v = `hunter2"o'k-part2`
	var s Set
	s.Add(v, "Secret db, data.password")
	s.Add("abc", "Secret db, data.short") // shorter than MinLength: kept as it is
	s.AddDelimiter("-")
	b := []byte(v)
	for _, form := range []string{
		v,
		base64.StdEncoding.EncodeToString(b), base64.RawStdEncoding.EncodeToString(b),
		base64.URLEncoding.EncodeToString(b), base64.RawURLEncoding.EncodeToString(b),
		`hunter2\"o'k-part2`,   // JSON and Go %q
		`hunter2"o''k-part2`,   // YAML single quotes
		`hunter2"o'k`, "part2", // split at the delimiter
	} {
		got := s.Mask("value " + form + " is bad")
		want := "value ****** is bad (****** stands for a secret value, never shown: Secret db, data.password)"
		if got != want {
			t.Errorf("Mask(%q):\n got %q\nwant %q", form, got, want)
		}
	}
	if got := s.Mask("key abc is fine"); got != "key abc is fine" {
		t.Errorf("a value shorter than MinLength was masked: %q", got)
	}
}

func TestMaskLinesAndOrigins(t *testing.T) {
	var s Set
	s.Add("-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG\n-----END KEY-----\n", "Secret tls, data.tls.key")
	s.Add("password", "Secret db, data.password") // a value equal to a key name
	got := s.Mask("line 2: MIIEvQIBADANBgkqhkiG: bad")
	if strings.Contains(got, "MIIEvQIBADANBgkqhkiG") || !strings.Contains(got, "Secret tls, data.tls.key") {
		t.Errorf("a line of a value: %q", got)
	}
	got = s.Mask("password is wrong")
	if strings.Contains(got, "password") {
		t.Errorf("the note shows the value through its origin: %q", got)
	}
	if got := s.Replace("path/password/x"); got != "path/******/x" {
		t.Errorf("Replace = %q", got)
	}
	var empty Set
	if got := empty.Mask("nothing to mask"); got != "nothing to mask" {
		t.Errorf("empty set: %q", got)
	}
}
