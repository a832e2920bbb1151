package sopsfile

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const secretYAML = `apiVersion: v1
kind: Secret
metadata:
  name: db
stringData:
  password: hunter2-plain
  list:
    - inner-secret-value
`

func newKeys(t *testing.T) (*Keys, string) {
	t.Helper()
	id, rcpt, err := NewIdentity()
	require.NoError(t, err)
	keys, err := ParseKeys([]byte("# created: now\n# public key: " + rcpt + "\n" + id + "\n"))
	require.NoError(t, err)
	return keys, rcpt
}

func TestDecryptRoundTrip(t *testing.T) {
	keys, rcpt := newKeys(t)
	enc, err := Encrypt([]byte(secretYAML), YAML, EncryptOptions{Recipients: []string{rcpt}, EncryptedRegex: "^(data|stringData)$"})
	require.NoError(t, err)
	assert.NotContains(t, string(enc), "hunter2-plain")
	assert.Contains(t, string(enc), "name: db", "the metadata stays readable under encrypted_regex")
	require.True(t, IsEncrypted(enc))
	require.False(t, IsEncrypted([]byte(secretYAML)))

	plain, err := Decrypt(enc, YAML, keys)
	require.NoError(t, err)
	assert.YAMLEq(t, secretYAML, string(plain.Data))
	assert.ElementsMatch(t, []string{"hunter2-plain", "inner-secret-value"}, plain.Values)
}

func TestDecryptJSON(t *testing.T) {
	keys, rcpt := newKeys(t)
	enc, err := Encrypt([]byte(`{"db":{"password":"json-secret"}}`), FormatOf("values.enc.json"), EncryptOptions{Recipients: []string{rcpt}})
	require.NoError(t, err)
	require.True(t, IsEncrypted(enc))
	plain, err := Decrypt(enc, JSON, keys)
	require.NoError(t, err)
	assert.JSONEq(t, `{"db":{"password":"json-secret"}}`, string(plain.Data))
	assert.Equal(t, []string{"json-secret"}, plain.Values)
}

func TestDecryptWrongKeyNamesRecipients(t *testing.T) {
	_, rcpt := newKeys(t)
	other, otherRcpt := newKeys(t)
	enc, err := Encrypt([]byte(secretYAML), YAML, EncryptOptions{Recipients: []string{rcpt}})
	require.NoError(t, err)

	_, err = Decrypt(enc, YAML, other)
	var keyErr *KeyError
	require.ErrorAs(t, err, &keyErr)
	assert.Equal(t, []string{rcpt}, keyErr.Recipients)
	assert.Contains(t, err.Error(), rcpt)
	assert.NotContains(t, err.Error(), otherRcpt)
	assert.NotContains(t, err.Error(), "hunter2")

	_, err = Decrypt(enc, YAML, nil)
	require.ErrorIs(t, err, ErrNoKeys)
}

func TestDecryptTampered(t *testing.T) {
	keys, rcpt := newKeys(t)
	enc, err := Encrypt([]byte("a: one\nb: two\n"), YAML, EncryptOptions{Recipients: []string{rcpt}, EncryptedRegex: "^a$"})
	require.NoError(t, err)
	tampered := strings.Replace(string(enc), "b: two", "b: three", 1)
	require.NotEqual(t, string(enc), tampered)
	_, err = Decrypt([]byte(tampered), YAML, keys)
	require.ErrorContains(t, err, "MAC does not match")
	assert.NotContains(t, err.Error(), "one")
}

func TestParseKeysErrorsShowNoKey(t *testing.T) {
	id, _, err := NewIdentity()
	require.NoError(t, err)
	mangled := strings.Replace(id, "AGE-SECRET-KEY-1", "AGE-SECRET-KEY-1X", 1)
	_, err = ParseKeys([]byte(id + "\n" + mangled + "\nnot a key at all\n"))
	require.EqualError(t, err, "lines 2, 3 are not "+identityHelp)
	assert.NotContains(t, err.Error(), mangled[20:])

	_, err = ParseKeys([]byte("# only a comment\n"))
	require.ErrorContains(t, err, "no age identity")

	keys, rcpt := newKeys(t)
	assert.Equal(t, "age identities for "+rcpt, keys.String())
	assert.Equal(t, []string{rcpt}, keys.Recipients())
	again, err := ParseKeys([]byte(keys.Identities()))
	require.NoError(t, err)
	assert.Equal(t, keys.Recipients(), again.Recipients())
}
