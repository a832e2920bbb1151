// Package accounts holds the local accounts of ferry-server as Argo CD
// declares them: accounts.NAME (its capabilities login and apiKey) and
// accounts.NAME.enabled in argocd-cm, the bcrypt password hash, its time
// and the API keys' ids in argocd-secret, and the admin account, whose
// first password the server makes and keeps in argocd-initial-admin-secret.
package accounts

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// The ConfigMap and Secrets of the control namespace, as Argo CD names them.
const (
	ConfigMapName          = "argocd-cm"
	SecretName             = "argocd-secret"
	InitialAdminSecretName = "argocd-initial-admin-secret"
	// Admin is the built-in account.
	Admin = "admin"
)

// Capabilities of an account.
const (
	CapLogin  = "login"
	CapAPIKey = "apiKey"
)

// Account is one local account.
type Account struct {
	Name         string
	Enabled      bool
	Capabilities []string
	// PasswordHash is the bcrypt hash; empty: no password set.
	PasswordHash  []byte
	PasswordMtime time.Time
	// Tokens are the ids of its API keys that are valid.
	Tokens []Token
}

// Token is an API key's record, as Argo CD keeps it in accounts.NAME.tokens.
type Token struct {
	ID        string `json:"id"`
	IssuedAt  int64  `json:"iat"`
	ExpiresAt int64  `json:"exp,omitempty"`
}

// Can reports whether the account has capability c.
func (a *Account) Can(c string) bool { return slices.Contains(a.Capabilities, c) }

// HasToken reports whether the API key id is one of the account's.
func (a *Account) HasToken(id string) bool {
	return slices.ContainsFunc(a.Tokens, func(t Token) bool { return t.ID == id })
}

// Read reads the accounts of argocd-cm's and argocd-secret's data. An
// account whose declaration is wrong is left out and said in problems,
// each naming the key and the fix.
func Read(cm map[string]string, secret map[string][]byte) (map[string]*Account, []string) {
	accts := map[string]*Account{Admin: {Name: Admin, Enabled: cm["admin.enabled"] != "false", Capabilities: []string{CapLogin}}}
	var problems []string
	for key, val := range cm {
		name, ok := strings.CutPrefix(key, "accounts.")
		if !ok || strings.Contains(name, ".") {
			continue
		}
		caps, bad := capabilities(val)
		if bad != "" {
			problems = append(problems, fmt.Sprintf("argocd-cm %s: %q is no capability: write login, apiKey or both, comma-separated", key, bad))
			continue
		}
		enabled := true
		if raw, ok := cm[key+".enabled"]; ok {
			b, err := strconv.ParseBool(raw)
			if err != nil {
				problems = append(problems, fmt.Sprintf("argocd-cm %s.enabled: %q is not true or false", key, raw))
				continue
			}
			enabled = b
		}
		accts[name] = &Account{Name: name, Enabled: enabled, Capabilities: caps}
	}
	for name, a := range accts {
		prefix := "accounts." + name
		if name == Admin {
			prefix = "admin"
		}
		a.PasswordHash = secret[prefix+".password"]
		if raw := string(secret[prefix+".passwordMtime"]); raw != "" {
			a.PasswordMtime, _ = time.Parse(time.RFC3339, raw)
		}
		if raw := secret["accounts."+name+".tokens"]; len(raw) > 0 {
			if err := json.Unmarshal(raw, &a.Tokens); err != nil {
				problems = append(problems, fmt.Sprintf("argocd-secret accounts.%s.tokens is no JSON list of tokens: its API keys are refused until it is fixed or removed", name))
				a.Tokens = nil
			}
		}
	}
	sort.Strings(problems)
	return accts, problems
}

func capabilities(val string) (caps []string, bad string) {
	for _, c := range strings.Split(val, ",") {
		switch c = strings.TrimSpace(c); c {
		case "":
		case CapLogin, CapAPIKey:
			caps = append(caps, c)
		default:
			return nil, c
		}
	}
	return caps, ""
}

// dummyHash is compared with when no account or no password is found, so
// that a wrong name costs the time a wrong password does.
var dummyHash, _ = bcrypt.GenerateFromPassword([]byte("ferry: no such account"), bcrypt.DefaultCost)

// ErrLogin is every refused login: it does not say whether the account
// exists.
var ErrLogin = errors.New("invalid username or password")

// Login checks name's password: nil when the account exists, is enabled,
// may log in and the password is its own.
func Login(accts map[string]*Account, name, password string) error {
	a := accts[name]
	hash := dummyHash
	if a != nil && len(a.PasswordHash) > 0 {
		hash = a.PasswordHash
	}
	err := bcrypt.CompareHashAndPassword(hash, []byte(password))
	if err != nil || a == nil || !a.Enabled || !a.Can(CapLogin) || len(a.PasswordHash) == 0 {
		return ErrLogin
	}
	return nil
}

// Hash is the bcrypt hash of a new password; a password shorter than 8
// or longer than 72 bytes (bcrypt's limit) is refused.
func Hash(password string) ([]byte, error) {
	if len(password) < 8 || len(password) > 72 {
		return nil, errors.New("a password has 8 to 72 characters")
	}
	return bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
}
