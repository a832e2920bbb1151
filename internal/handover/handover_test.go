package handover

import (
	"bytes"
	"crypto/rand"
	"errors"
	"testing"
)

func TestSealOpens(t *testing.T) {
	keys, err := NewKeys()
	if err != nil {
		t.Fatal(err)
	}
	payload := bytes.Repeat([]byte(`{"kind":"Secret","data":{"password":"aHVudGVyMg=="}}`), 1000)
	sealed, err := Seal(payload, keys.Public())
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("aHVudGVyMg==")) || bytes.Contains(sealed, []byte("Secret")) {
		t.Fatal("the sealed set holds the manifests in clear")
	}
	got, err := keys.Open(sealed)
	if err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("Open = %d bytes, %v; want the payload back", len(got), err)
	}
	other, _ := NewKeys()
	if _, err := other.Open(sealed); err == nil {
		t.Fatal("another worker's key opened the set")
	}
	sealed[len(sealed)-1] ^= 1
	if _, err := keys.Open(sealed); err == nil {
		t.Fatal("a changed set opened")
	}
}

func TestSealRefusesWhatTemporalCannotCarry(t *testing.T) {
	keys, _ := NewKeys()
	random := make([]byte, MaxSealed+1)
	_, _ = rand.Read(random) // does not compress
	if _, err := Seal(random, keys.Public()); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Seal of %d random bytes: %v, want ErrTooLarge", len(random), err)
	}
}
