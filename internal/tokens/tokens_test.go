package tokens

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newSigner(t *testing.T) *Signer {
	t.Helper()
	key, err := NewKey()
	require.NoError(t, err)
	s, err := NewSigner(key)
	require.NoError(t, err)
	return s
}

func TestIssueAndVerify(t *testing.T) {
	s := newSigner(t)
	tok, issued, err := s.Issue(KindSession, "alice", time.Hour, func(c *Claims) { c.Groups = []string{"team-a"} })
	require.NoError(t, err)
	got, err := s.Verify(tok)
	require.NoError(t, err)
	assert.Equal(t, "alice", got.Subject)
	assert.Equal(t, []string{"team-a"}, got.Groups)
	assert.Equal(t, issued.ID, got.ID)
	assert.Equal(t, KindSession, got.Kind)
}

func TestForgedAndExpiredTokensAreRefused(t *testing.T) {
	s := newSigner(t)
	tok, _, err := s.Issue(KindSession, "alice", time.Hour, nil)
	require.NoError(t, err)
	parts := strings.Split(tok, ".")

	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + parts[1] + "."
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	changed := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(payload), `"alice"`, `"admin"`, 1))) + "." + parts[2]
	otherKey, _, err := newSigner(t).Issue(KindSession, "alice", time.Hour, nil)
	require.NoError(t, err)

	for name, forged := range map[string]string{"alg none": none, "payload changed": changed, "another key": otherKey, "garbage": "x.y.z"} {
		_, err := s.Verify(forged)
		assert.ErrorIs(t, err, ErrInvalid, name)
	}
	_, err = s.Verify(tok)
	require.NoError(t, err, "the token itself is good until it expires")
	s.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	_, err = s.Verify(tok)
	assert.ErrorIs(t, err, ErrInvalid, "expired")
}
