package accounts

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadAndLogin(t *testing.T) {
	hash, err := Hash("alice-password")
	require.NoError(t, err)
	accts, problems := Read(
		map[string]string{"accounts.alice": "apiKey, login", "accounts.ci": "apiKey", "accounts.off": "login", "accounts.off.enabled": "false", "accounts.bad": "login, sudo"},
		map[string][]byte{"accounts.alice.password": hash, "accounts.ci.password": hash, "accounts.off.password": hash,
			"accounts.alice.tokens": []byte(`[{"id":"k1","iat":1700000000}]`)})
	assert.Equal(t, []string{`argocd-cm accounts.bad: "sudo" is no capability: write login, apiKey or both, comma-separated`}, problems)
	assert.NoError(t, Login(accts, "alice", "alice-password"))
	assert.True(t, accts["alice"].HasToken("k1"))
	for name, pw := range map[string]string{"alice": "wrong-password", "ci": "alice-password", "off": "alice-password", "nobody": "alice-password", "admin": "alice-password"} {
		assert.ErrorIs(t, Login(accts, name, pw), ErrLogin, "%s may not log in with that password", name)
	}
}

func TestLimiterPerUserAndSource(t *testing.T) {
	l := NewLimiter(3, time.Minute)
	now := time.Unix(1_000_000, 0)
	l.now = func() time.Time { return now }
	for range 3 {
		ok, _ := l.Allow("alice", "10.0.0.1")
		require.True(t, ok)
		l.Failed("alice", "10.0.0.1")
	}
	ok, wait := l.Allow("alice", "10.0.0.2")
	assert.False(t, ok, "the user is limited from any source")
	assert.Equal(t, time.Minute, wait)
	ok, _ = l.Allow("bob", "10.0.0.1")
	assert.False(t, ok, "the source is limited for any user")
	ok, _ = l.Allow("bob", "10.0.0.3")
	assert.True(t, ok)
	now = now.Add(time.Minute)
	ok, _ = l.Allow("alice", "10.0.0.1")
	assert.True(t, ok, "once the window has passed")
}
