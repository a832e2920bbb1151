// Package handover moves a rendered manifest set from the control side to
// a region worker through a channel both can reach but neither trusts with
// the manifests in clear: a Temporal workflow's history. The region worker
// makes a key pair that lives only in its memory and sends the public key;
// the control side compresses the set and seals it to that key (NaCl's
// anonymous sealed box: X25519, XSalsa20-Poly1305), so the history holds
// ciphertext that nothing but that worker process could ever open. The
// region checks what it opens against the digest the app's workflow holds,
// so a set that is not the one rendered is refused however it arrived.
//
//	keys, _ := handover.NewKeys()
//	sealed, _ := handover.Seal(payload, keys.Public())  // control side
//	payload, _ := keys.Open(sealed)                      // region side
package handover

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"errors"
	"fmt"
	"io"

	"golang.org/x/crypto/nacl/box"
)

// MaxSealed bounds a sealed set, well inside the 2 MB that Temporal allows
// a payload: a larger set cannot be handed over this way.
const MaxSealed = 1536 << 10

// maxOpened bounds what a sealed set may decompress to.
const maxOpened = 256 << 20

// ErrTooLarge is wrapped by Seal's error for a set over MaxSealed.
var ErrTooLarge = errors.New("too large to hand over through Temporal")

// Keys is a region worker's key pair; the private key never leaves it.
type Keys struct {
	public, private *[32]byte
}

// NewKeys makes a key pair.
func NewKeys() (*Keys, error) {
	pub, priv, err := box.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("make the key pair for manifest handovers: %w", err)
	}
	return &Keys{public: pub, private: priv}, nil
}

// Public is the public key, for the control side to seal to.
func (k *Keys) Public() []byte { return k.public[:] }

// Seal compresses payload and seals it to the public key pub.
func Seal(payload, pub []byte) ([]byte, error) {
	if len(pub) != 32 {
		return nil, fmt.Errorf("a handover key is 32 bytes, got %d", len(pub))
	}
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	if _, err := zw.Write(payload); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	if n := zipped.Len() + box.AnonymousOverhead; n > MaxSealed {
		return nil, fmt.Errorf("the set is %d KiB compressed, over %d KiB: %w", n>>10, MaxSealed>>10, ErrTooLarge)
	}
	var key [32]byte
	copy(key[:], pub)
	return box.SealAnonymous(nil, zipped.Bytes(), &key, rand.Reader)
}

// Open opens a set sealed to k's public key and decompresses it.
func (k *Keys) Open(sealed []byte) ([]byte, error) {
	zipped, ok := box.OpenAnonymous(nil, sealed, k.public, k.private)
	if !ok {
		return nil, errors.New("the handed-over set does not open with this worker's key: it was sealed for another")
	}
	zr, err := gzip.NewReader(bytes.NewReader(zipped))
	if err != nil {
		return nil, fmt.Errorf("the handed-over set: %w", err)
	}
	out, err := io.ReadAll(io.LimitReader(zr, maxOpened+1))
	if err != nil {
		return nil, fmt.Errorf("the handed-over set: %w", err)
	}
	if len(out) > maxOpened {
		return nil, fmt.Errorf("the handed-over set opens to more than %d MiB", maxOpened>>20)
	}
	return out, nil
}
