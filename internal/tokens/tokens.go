// Package tokens issues and checks the JWTs of ferry-server: the session
// of a login (a local account's password, or SSO), an account's API key,
// and a project role's token. They are signed with ES256 by a key the
// server keeps in a Secret; a token signed otherwise, with alg none, or
// whose time is over is refused, saying nothing of the key or the token.
package tokens

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Issuer is the iss of every token the server signs.
const Issuer = "ferry"

// Kinds of token: what the subject is and how it may be revoked.
const (
	// KindSession is a login's: revoked by a password change after it.
	KindSession = "session"
	// KindSSO is an SSO login's: its subject and groups come from the
	// provider's ID token; it ends with its time.
	KindSSO = "sso"
	// KindAPIKey is an account's API key: revoked by deleting its id from
	// the account's tokens.
	KindAPIKey = "apiKey"
	// KindProject is a project role's: revoked by deleting its id from
	// the role's jwtTokens.
	KindProject = "project"
)

// Claims are a token's claims.
type Claims struct {
	jwt.RegisteredClaims
	// Kind is KindSession, KindAPIKey or KindProject.
	Kind string `json:"ferry.dev/kind"`
	// Groups and Email are an SSO login's, from the provider's ID token.
	Groups []string `json:"groups,omitempty"`
	Email  string   `json:"email,omitempty"`
}

// Signer signs and checks tokens with one key.
type Signer struct {
	key *ecdsa.PrivateKey
	now func() time.Time
}

// NewKey makes a new P-256 key, PEM-encoded, for a Secret.
func NewKey() ([]byte, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

// NewSigner reads a PEM key NewKey made.
func NewSigner(pemKey []byte) (*Signer, error) {
	b, _ := pem.Decode(pemKey)
	if b == nil {
		return nil, errors.New("the signing key is no PEM block")
	}
	k, err := x509.ParseECPrivateKey(b.Bytes)
	if err != nil {
		return nil, fmt.Errorf("the signing key: %w", err)
	}
	return &Signer{key: k, now: time.Now}, nil
}

// NewID is a new token id (jti).
func NewID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Issue signs a token of kind for subject, valid for ttl (0: without end,
// as Argo CD's API keys and project tokens may be), with a new id.
func (s *Signer) Issue(kind, subject string, ttl time.Duration, extra func(*Claims)) (string, *Claims, error) {
	now := s.now().Truncate(time.Second)
	c := &Claims{Kind: kind, RegisteredClaims: jwt.RegisteredClaims{
		Issuer: Issuer, Subject: subject, ID: NewID(),
		IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now),
	}}
	if ttl > 0 {
		c.ExpiresAt = jwt.NewNumericDate(now.Add(ttl))
	}
	if extra != nil {
		extra(c)
	}
	t, err := jwt.NewWithClaims(jwt.SigningMethodES256, c).SignedString(s.key)
	return t, c, err
}

// ErrInvalid is every refusal of Verify: it names nothing of the token.
var ErrInvalid = errors.New("invalid or expired token")

// Verify checks a token's signature (ES256 with the key, nothing else),
// issuer and times, and returns its claims.
func (s *Signer) Verify(token string) (*Claims, error) {
	var c Claims
	_, err := jwt.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return &s.key.PublicKey, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodES256.Alg()}), jwt.WithIssuer(Issuer),
		jwt.WithTimeFunc(s.now), jwt.WithIssuedAt())
	if err != nil || c.Subject == "" || c.ID == "" {
		return nil, ErrInvalid
	}
	switch c.Kind {
	case KindSession, KindSSO, KindAPIKey, KindProject:
		return &c, nil
	}
	return nil, ErrInvalid
}
