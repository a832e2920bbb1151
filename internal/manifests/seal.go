package manifests

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
)

// EnvCacheKey is the environment variable holding the secret that
// authenticates manifest cache entries (and encrypts those with Secrets).
// Workers sharing a Redis need the same one; it never appears in a flag, so
// it stays out of ps output.
const EnvCacheKey = "FERRY_CACHE_KEY"

// minCacheKeyLen is the shortest FERRY_CACHE_KEY accepted.
const minCacheKeyLen = 16

// sealMagic starts every sealed entry; a new layout gets a new magic, and
// the entries of another layout fail to open, which is a miss.
var sealMagic = []byte("ferry-sealed-1\n")

const (
	sealPlain     byte = 0
	sealEncrypted byte = 1
)

// Sealer authenticates cache entries: each is stored with an HMAC-SHA256,
// keyed by a secret only the workers hold, over its cache key and its
// bytes, so that whoever can write to Redis cannot plant a set a worker
// accepts (nor move a real entry under another key). Entries holding
// Secrets are also encrypted (AES-256-GCM, the cache key as additional
// data), so that Redis never holds a Secret's data in clear. The MAC and
// encryption keys are derived from the secret with HKDF-SHA256.
type Sealer struct {
	macKey []byte
	aead   cipher.AEAD
	// OnVerifyFailure, when set, is called for every entry that fails to
	// open: forged, corrupt, or sealed under another secret.
	OnVerifyFailure func()
}

// NewSealer derives the sealing keys from secret, which must be at least
// 16 bytes.
func NewSealer(secret []byte) (*Sealer, error) {
	if len(secret) < minCacheKeyLen {
		return nil, fmt.Errorf("manifest cache key: %d bytes, want at least %d (e.g. openssl rand -hex 32)", len(secret), minCacheKeyLen)
	}
	macKey, err := hkdf.Key(sha256.New, secret, nil, "ferry manifest cache mac", 32)
	if err != nil {
		return nil, err
	}
	encKey, err := hkdf.Key(sha256.New, secret, nil, "ferry manifest cache encryption", 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(encKey)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Sealer{macKey: macKey, aead: aead}, nil
}

// NewRandomSealer seals with a secret of this process only: entries it
// writes can be read by no other process.
func NewRandomSealer() *Sealer {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	s, err := NewSealer(secret)
	if err != nil {
		panic(err)
	}
	return s
}

// Seal returns payload sealed for key; with encrypt, its bytes are
// encrypted too.
func (s *Sealer) Seal(key string, payload []byte, encrypt bool) []byte {
	flag, body := sealPlain, payload
	if encrypt {
		flag = sealEncrypted
		nonce := make([]byte, s.aead.NonceSize())
		if _, err := rand.Read(nonce); err != nil {
			panic(err)
		}
		body = s.aead.Seal(nonce, nonce, payload, []byte(key))
	}
	out := make([]byte, 0, len(sealMagic)+1+len(body)+sha256.Size)
	out = append(out, sealMagic...)
	out = append(out, flag)
	out = append(out, body...)
	return append(out, s.mac(key, flag, body)...)
}

// Open checks an entry read under key and returns its payload; any entry
// that was not sealed for key with this secret is an error.
func (s *Sealer) Open(key string, entry []byte) ([]byte, error) {
	payload, err := s.open(key, entry)
	if err != nil && s.OnVerifyFailure != nil {
		s.OnVerifyFailure()
	}
	return payload, err
}

func (s *Sealer) open(key string, entry []byte) ([]byte, error) {
	if !bytes.HasPrefix(entry, sealMagic) || len(entry) < len(sealMagic)+1+sha256.Size {
		return nil, errors.New("manifest cache entry: not sealed by a Ferry worker")
	}
	rest := entry[len(sealMagic):]
	flag, body, sum := rest[0], rest[1:len(rest)-sha256.Size], rest[len(rest)-sha256.Size:]
	if !hmac.Equal(sum, s.mac(key, flag, body)) {
		return nil, fmt.Errorf("manifest cache entry: authentication failed (forged, or sealed with another %s)", EnvCacheKey)
	}
	switch flag {
	case sealPlain:
		return body, nil
	case sealEncrypted:
		n := s.aead.NonceSize()
		if len(body) < n {
			return nil, errors.New("manifest cache entry: truncated")
		}
		payload, err := s.aead.Open(nil, body[:n], body[n:], []byte(key))
		if err != nil {
			return nil, fmt.Errorf("manifest cache entry: decrypt: %w", err)
		}
		return payload, nil
	}
	return nil, fmt.Errorf("manifest cache entry: unknown seal %d", flag)
}

// mac is the HMAC-SHA256 of the key's length, the key, the flag and body.
func (s *Sealer) mac(key string, flag byte, body []byte) []byte {
	m := hmac.New(sha256.New, s.macKey)
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(key)))
	m.Write(n[:])
	m.Write([]byte(key))
	m.Write([]byte{flag})
	m.Write(body)
	return m.Sum(nil)
}

// holdsSecret reports whether a set has a core/v1 Secret, whose entry is
// then encrypted.
func holdsSecret(objs Set) bool {
	for _, o := range objs {
		if o.GetKind() == "Secret" && o.GetAPIVersion() == "v1" {
			return true
		}
	}
	return false
}
