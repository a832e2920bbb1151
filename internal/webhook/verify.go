package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
)

var (
	errNoSignature  = errors.New("the delivery is not signed")
	errBadSignature = errors.New("the signature does not match the secret")
)

// verifyHMACHeader checks an HMAC-SHA256 of the body, hex-encoded after
// prefix in header (GitHub's X-Hub-Signature-256, Bitbucket Cloud's
// X-Hub-Signature, Gitea's X-Gitea-Signature).
func verifyHMACHeader(header, prefix string) func(string, http.Header, []byte) error {
	return func(secret string, h http.Header, body []byte) error {
		got := strings.TrimSpace(h.Get(header))
		if got == "" {
			return errNoSignature
		}
		if !strings.HasPrefix(got, prefix) {
			return errBadSignature
		}
		sig, err := hex.DecodeString(got[len(prefix):])
		if err != nil {
			return errBadSignature
		}
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write(body)
		if !hmac.Equal(sig, mac.Sum(nil)) {
			return errBadSignature
		}
		return nil
	}
}

// verifyGitLabToken checks X-Gitlab-Token, which carries the secret itself.
// Both sides are hashed first so that the comparison's time does not depend
// on the secret's length either.
func verifyGitLabToken(secret string, h http.Header, _ []byte) error {
	got := h.Get("X-Gitlab-Token")
	if got == "" {
		return errNoSignature
	}
	a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(secret))
	if subtle.ConstantTimeCompare(a[:], b[:]) != 1 {
		return errBadSignature
	}
	return nil
}

// Sign returns the HMAC-SHA256 of body under secret, hex-encoded: what
// GitHub sends after "sha256=" in X-Hub-Signature-256. Tests and tools use
// it to make deliveries.
func Sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}
