package gitsource

import (
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
)

// AuthProvider gives the credentials to use for a repository URL. A nil
// AuthMethod with a nil error means "no credentials": go-git then uses the
// user info in the URL, if any, or the SSH agent for SSH URLs.
type AuthProvider interface {
	Auth(repoURL string) (transport.AuthMethod, error)
}

// Environment variables read by NewEnvAuth.
const (
	// EnvToken is an access token sent over HTTPS as the basic-auth password
	// (GitHub, GitLab, Gitea and Bitbucket accept tokens this way).
	EnvToken = "FERRY_GIT_TOKEN"
	// EnvUsername is the HTTPS basic-auth user; with EnvToken it defaults to
	// "git", which most servers accept; Bitbucket wants "x-token-auth".
	EnvUsername = "FERRY_GIT_USERNAME"
	// EnvPassword is the HTTPS basic-auth password, used when EnvToken is empty.
	EnvPassword = "FERRY_GIT_PASSWORD"
	// EnvSSHKeyFile is a PEM private key (unencrypted) for ssh:// and
	// scp-like URLs.
	EnvSSHKeyFile = "FERRY_GIT_SSH_KEY_FILE"
	// EnvKnownHosts is a known_hosts file checked for SSH host keys. When
	// empty, go-git's defaults apply ($SSH_KNOWN_HOSTS, ~/.ssh/known_hosts,
	// /etc/ssh/ssh_known_hosts). Host keys are always checked.
	EnvKnownHosts = "FERRY_GIT_KNOWN_HOSTS"
	// EnvHosts is the comma-separated list of hosts the credentials above
	// are sent to ("github.com", or "host:port" for one port only). It is
	// required with any of them: a credential is never sent to a host that
	// an Application names unless that host was given for it.
	EnvHosts = "FERRY_GIT_HOSTS"
	// EnvInsecure ("true") lets the basic-auth credential go over plain
	// http://. Without it, a fetch from an http:// URL of a listed host
	// fails rather than send the password in clear.
	EnvInsecure = "FERRY_GIT_INSECURE"
)

// EnvAuth is the worker's one set of Git credentials, taken from the
// environment (see the Env* constants). Credentials written in a repository
// URL take precedence over it.
type EnvAuth struct {
	username, password string
	ssh                *gitssh.PublicKeys
	hosts              hostSet
	insecure           bool
}

var _ AuthProvider = (*EnvAuth)(nil)

// NewEnvAuth reads the FERRY_GIT_* variables from the process environment.
func NewEnvAuth() (*EnvAuth, error) { return EnvAuthFrom(os.Getenv) }

// EnvAuthFrom reads the FERRY_GIT_* variables through getenv. It fails when
// a credential is set without FERRY_GIT_HOSTS, or the SSH key or known_hosts
// file cannot be read, so that a misconfigured worker stops at start rather
// than at its first fetch.
func EnvAuthFrom(getenv func(string) string) (*EnvAuth, error) {
	var set []string
	for _, name := range []string{EnvToken, EnvUsername, EnvPassword, EnvSSHKeyFile} {
		if getenv(name) != "" {
			set = append(set, name)
		}
	}
	hosts := parseHosts(getenv(EnvHosts))
	if len(set) > 0 && len(hosts) == 0 {
		return nil, fmt.Errorf("git credentials: %s set but %s is empty: set %s to the comma-separated hosts "+
			"the credential is for (e.g. github.com), so that it is never sent to another host",
			strings.Join(set, ", "), EnvHosts, EnvHosts)
	}
	insecure, err := parseBool(getenv(EnvInsecure))
	if err != nil {
		return nil, fmt.Errorf("git credentials: %s=%q: %w; use true or false", EnvInsecure, getenv(EnvInsecure), err)
	}
	a := &EnvAuth{username: getenv(EnvUsername), password: getenv(EnvPassword), hosts: hosts, insecure: insecure}
	if token := getenv(EnvToken); token != "" {
		a.password = token
		if a.username == "" {
			a.username = "git"
		}
	}
	if keyFile := getenv(EnvSSHKeyFile); keyFile != "" {
		keys, err := gitssh.NewPublicKeysFromFile(gitssh.DefaultUsername, keyFile, "")
		if err != nil {
			return nil, fmt.Errorf("git credentials: %s=%s: %w", EnvSSHKeyFile, keyFile, err)
		}
		if kh := getenv(EnvKnownHosts); kh != "" {
			cb, err := gitssh.NewKnownHostsCallback(kh)
			if err != nil {
				return nil, fmt.Errorf("git credentials: %s=%s: %w", EnvKnownHosts, kh, err)
			}
			keys.HostKeyCallback = cb
		}
		a.ssh = keys
	}
	return a, nil
}

// Auth returns basic auth for http(s) URLs and the SSH key for SSH URLs, or
// nil when the URL carries its own credentials, its host is not in
// FERRY_GIT_HOSTS, or nothing is configured for its scheme. It fails for an
// http:// URL of a listed host unless FERRY_GIT_INSECURE is true.
func (a *EnvAuth) Auth(repoURL string) (transport.AuthMethod, error) {
	scheme, host, user, hasUserInfo := splitURL(repoURL)
	if !a.hosts.match(repoURL) {
		return nil, nil
	}
	switch scheme {
	case "http", "https":
		if hasUserInfo || a.password == "" {
			return nil, nil
		}
		if scheme == "http" && !a.insecure {
			return nil, &PlainHTTPError{Host: host, Fix: "set " + EnvInsecure + "=true"}
		}
		return &githttp.BasicAuth{Username: a.username, Password: a.password}, nil
	case "ssh":
		if a.ssh == nil {
			return nil, nil
		}
		keys := *a.ssh
		if user != "" {
			keys.User = user
		}
		return &keys, nil
	}
	return nil, nil
}

// splitURL returns the scheme ("ssh" for scp-like), the lower-cased host
// without port, the user name and whether user info is present.
func splitURL(raw string) (scheme, host, user string, hasUserInfo bool) {
	raw = strings.TrimSpace(raw)
	if strings.Contains(raw, "://") {
		u, err := url.Parse(raw)
		if err != nil {
			return "", "", "", false
		}
		if u.User != nil {
			user, hasUserInfo = u.User.Username(), true
		}
		return strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), user, hasUserInfo
	}
	if m := scpLike.FindStringSubmatch(raw); m != nil && !strings.HasPrefix(raw, "/") {
		return "ssh", strings.ToLower(m[2]), m[1], m[1] != ""
	}
	return "file", "", "", false
}
