package devenv

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/crypto/bcrypt"
	"golang.org/x/sync/errgroup"
	"sigs.k8s.io/yaml"
)

// Dex is the stack's OIDC provider, for ferry-server's SSO: the tools bin
// dir's dex (hack/tools.sh), on its memory storage, with the local password
// connector and the static users of DexUsers.
const (
	dexTimeout = 30 * time.Second
	// DexClientID is the static client ferry-server logs users in as.
	DexClientID = "ferry"
	// CLICallbackURL is where `ferry login --sso` takes the redirect back, as
	// Argo CD's CLI does; Dex accepts it for DexClientID.
	CLICallbackURL = "http://localhost:8085/auth/callback"
)

// DexUser is a user of the stack's Dex. Dex's login form asks for the
// email address.
type DexUser struct {
	Username, Email, Password string
	Groups                    []string
}

// DexUsers are the static users of the stack's Dex, for tests and trying
// SSO locally. Dex puts Groups in the groups claim when the groups scope is
// asked for.
var DexUsers = []DexUser{
	{Username: "alice", Email: "alice@example.com", Password: "alice-password", Groups: []string{"team-a"}},
	{Username: "bob", Email: "bob@example.com", Password: "bob-password", Groups: []string{"team-b"}},
}

// dexConfig is Dex's configuration file, the fields the stack sets. Dex reads
// YAML as JSON through ghodss/yaml, hence the JSON tags.
type dexConfig struct {
	Issuer  string `json:"issuer"`
	Storage struct {
		Type string `json:"type"`
	} `json:"storage"`
	Web struct {
		HTTP string `json:"http"`
	} `json:"web"`
	Logger struct {
		Level  string `json:"level"`
		Format string `json:"format"`
	} `json:"logger"`
	OAuth2 struct {
		SkipApprovalScreen bool `json:"skipApprovalScreen"`
	} `json:"oauth2"`
	EnablePasswordDB bool                `json:"enablePasswordDB"`
	StaticPasswords  []dexStaticPassword `json:"staticPasswords"`
	StaticClients    []dexStaticClient   `json:"staticClients"`
}

type dexStaticPassword struct {
	Email    string   `json:"email"`
	Hash     string   `json:"hash"`
	Username string   `json:"username"`
	UserID   string   `json:"userID"`
	Groups   []string `json:"groups"`
}

type dexStaticClient struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Secret       string   `json:"secret"`
	RedirectURIs []string `json:"redirectURIs"`
}

// dexOptions is what a stack's Dex is started with.
type dexOptions struct {
	port         int
	clientSecret string
	redirectURIs []string
}

// dexIssuer is the issuer URL of a Dex on port: plain HTTP, on loopback.
func dexIssuer(port int) string { return "http://" + hostPort(port) + "/dex" }

// writeDexConfig writes Dex's configuration to path: memory storage, the
// password connector with DexUsers, the client DexClientID, and no approval
// screen (a login goes straight back to the client).
func writeDexConfig(path string, o dexOptions) error {
	var c dexConfig
	c.Issuer = dexIssuer(o.port)
	c.Storage.Type = "memory"
	c.Web.HTTP = hostPort(o.port)
	c.Logger.Level, c.Logger.Format = "info", "text"
	c.OAuth2.SkipApprovalScreen = true
	c.EnablePasswordDB = true
	for _, u := range DexUsers {
		// Dex refuses hashes below bcrypt's default cost.
		hash, err := bcrypt.GenerateFromPassword([]byte(u.Password), bcrypt.DefaultCost)
		if err != nil {
			return err
		}
		c.StaticPasswords = append(c.StaticPasswords, dexStaticPassword{
			Email: u.Email, Hash: string(hash), Username: u.Username, UserID: u.Username, Groups: u.Groups,
		})
	}
	c.StaticClients = []dexStaticClient{{ID: DexClientID, Name: "Ferry", Secret: o.clientSecret, RedirectURIs: o.redirectURIs}}
	out, err := yaml.Marshal(c)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o600) // it holds the client secret
}

// startDex runs Dex on a loopback port and returns once its discovery
// document answers.
func startDex(ctx context.Context, stateDir, toolsBin string, env []string, o dexOptions) (*proc, error) {
	cfg := filepath.Join(stateDir, "dex.yaml")
	if err := writeDexConfig(cfg, o); err != nil {
		return nil, fmt.Errorf("dex: write %s: %w", cfg, err)
	}
	p, err := startProc("dex", filepath.Join(stateDir, "logs"), stateDir, env, filepath.Join(toolsBin, "dex"), "serve", cfg)
	if err != nil {
		return nil, err
	}
	discovery := dexIssuer(o.port) + "/.well-known/openid-configuration"
	return p, p.waitReady(ctx, "dex", dexTimeout, answersOK(discovery))
}

// hasDex reports whether the tools bin dir holds dex: a tools cache built
// before hack/tools.sh built Dex has none, and its stack runs without.
func hasDex(toolsBin string) bool {
	_, err := os.Stat(filepath.Join(toolsBin, "dex"))
	return err == nil
}

// goStartDex starts Dex on port in g, if the tools bin dir has it, and fills
// the stack's OIDC fields: the client DexClientID, with a new secret, may
// redirect to OIDCRedirectURIs, https://ServerListen/auth/callback (ferry-server)
// then CLICallbackURL.
func (s *Stack) goStartDex(ctx context.Context, g *errgroup.Group, env []string, port int) {
	if !hasDex(s.ToolsBin) {
		s.logf("no dex in %s: the stack runs without an OIDC provider (hack/tools.sh builds it)", s.ToolsBin)
		return
	}
	s.OIDCIssuer = dexIssuer(port)
	s.OIDCClientID = DexClientID
	s.OIDCClientSecret = rand.Text()
	s.OIDCRedirectURIs = []string{"https://" + s.ServerListen + "/auth/callback", CLICallbackURL}
	o := dexOptions{port: port, clientSecret: s.OIDCClientSecret, redirectURIs: s.OIDCRedirectURIs}
	g.Go(func() error {
		t := time.Now()
		p, err := startDex(ctx, s.StateDir, s.ToolsBin, env, o)
		s.mu.Lock()
		s.dex = p
		s.mu.Unlock()
		if err == nil {
			s.logf("dex: ready after %s (issuer %s)", since(t), s.OIDCIssuer)
		}
		return err
	})
}
