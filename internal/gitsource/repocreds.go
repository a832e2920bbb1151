package gitsource

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// The label and values of Argo CD's declarative repository Secrets.
const (
	SecretTypeLabel     = "argocd.argoproj.io/secret-type"
	SecretTypeRepo      = "repository"
	SecretTypeRepoCreds = "repo-creds"
)

// repoCredFields are the Secret keys read; the others Argo CD knows are
// refused, so that a credential is never half applied.
var repoCredFields = map[string]bool{
	"url": true, "type": true, "name": true, "project": true, "username": true, "password": true,
	"bearerToken": true, "sshPrivateKey": true, "insecure": true, "tlsClientCertData": true, "tlsClientCertKey": true,
	"enableOCI": true, "insecureOCIForceHttp": true,
}

// RepoCreds gives the credentials of Argo CD repository Secrets: a
// "repository" Secret's to its URL only, a "repo-creds" Secret's to the
// URLs under its prefix (the longest prefix wins, as in Argo CD), and
// Fallback's (the environment credential) to the rest. It gives the CA
// certificates of argocd-tls-certs-cm to the hosts they are named for.
type RepoCreds struct {
	repos     []repoCred // by normalised URL
	templates []repoCred // longest prefix first
	cas       map[string][]byte
	// Fallback answers for URLs no Secret matches; nil means none.
	Fallback AuthProvider
}

var (
	_ AuthProvider = (*RepoCreds)(nil)
	_ TLSProvider  = (*RepoCreds)(nil)
)

type repoCred struct {
	source             string // file and Secret name, for errors
	url                string
	username, password string
	bearer             string
	ssh                *gitssh.PublicKeys
	insecure           bool
	tlsCert, tlsKey    string // PEM
	// enableOCI and forceHTTP are a Helm repository Secret's: a registry
	// given as host/path, and plain HTTP to it.
	enableOCI, forceHTTP bool
}

// RepoCredObjects are Argo CD's repository objects read from one place:
// the Secrets labelled with SecretTypeLabel and the argocd-tls-certs-cm
// ConfigMap (others are ignored).
type RepoCredObjects struct {
	// Source names the place in errors: a file, a namespace.
	Source     string
	Secrets    []corev1.Secret
	ConfigMaps []corev1.ConfigMap
}

// LoadRepoCreds reads every *.yaml and *.yml file of dir (documents that
// are not Secrets with the secret-type label, nor argocd-tls-certs-cm, are
// skipped) and reports every bad object at once. SSH host keys are checked
// against knownHosts (empty: go-git's defaults).
func LoadRepoCreds(dir, knownHosts string) (*RepoCreds, error) {
	objs, err := ReadRepoCredsDir(dir)
	if objs == nil {
		return nil, err
	}
	rc, rerr := NewRepoCreds(objs, knownHosts)
	return rc, errors.Join(err, rerr)
}

// ReadRepoCredsDir decodes the Secrets and ConfigMaps of every *.yaml and
// *.yml file of dir, one RepoCredObjects per file.
func ReadRepoCredsDir(dir string) ([]RepoCredObjects, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.y*ml"))
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("repository credentials: %w", err)
	}
	objs := []RepoCredObjects{}
	var errs []error
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			errs = append(errs, fmt.Errorf("repository credentials: %w", err))
			continue
		}
		o := RepoCredObjects{Source: f}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			var raw struct {
				Kind string `json:"kind"`
			}
			var doc json.RawMessage
			if err := dec.Decode(&doc); err != nil {
				if !errors.Is(err, io.EOF) {
					errs = append(errs, fmt.Errorf("repository credentials: %s: %w", f, err))
				}
				break
			}
			if json.Unmarshal(doc, &raw) != nil {
				continue
			}
			switch raw.Kind {
			case "Secret":
				var s corev1.Secret
				if err := json.Unmarshal(doc, &s); err != nil {
					errs = append(errs, fmt.Errorf("repository credentials: %s: %w", f, err))
					continue
				}
				o.Secrets = append(o.Secrets, s)
			case "ConfigMap":
				var cm corev1.ConfigMap
				if err := json.Unmarshal(doc, &cm); err != nil {
					errs = append(errs, fmt.Errorf("repository credentials: %s: %w", f, err))
					continue
				}
				o.ConfigMaps = append(o.ConfigMaps, cm)
			}
		}
		objs = append(objs, o)
	}
	return objs, errors.Join(errs...)
}

// NewRepoCreds builds the credentials of objs, reporting every bad Secret
// and certificate at once.
func NewRepoCreds(objs []RepoCredObjects, knownHosts string) (*RepoCreds, error) {
	rc := &RepoCreds{cas: map[string][]byte{}}
	var errs []error
	for _, o := range objs {
		for i := range o.Secrets {
			s := &o.Secrets[i]
			typ := s.Labels[SecretTypeLabel]
			if typ != SecretTypeRepo && typ != SecretTypeRepoCreds {
				continue
			}
			c, err := parseRepoCred(fmt.Sprintf("%s: Secret %q", o.Source, s.Name), s, knownHosts)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if typ == SecretTypeRepo {
				rc.repos = append(rc.repos, c)
			} else {
				rc.templates = append(rc.templates, c)
			}
		}
		for _, cm := range o.ConfigMaps {
			if cm.Name != TLSCertsConfigMap {
				continue
			}
			cas, err := parseTLSCerts(fmt.Sprintf("%s: ConfigMap %q", o.Source, cm.Name), cm.Data)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			for h, pem := range cas {
				rc.cas[h] = append(rc.cas[h], pem...)
			}
		}
	}
	sort.SliceStable(rc.templates, func(i, j int) bool { return len(rc.templates[i].url) > len(rc.templates[j].url) })
	return rc, errors.Join(errs...)
}

func parseRepoCred(source string, s *corev1.Secret, knownHosts string) (repoCred, error) {
	fields := map[string]string{}
	for k, v := range s.Data {
		fields[k] = string(v)
	}
	for k, v := range s.StringData {
		fields[k] = v
	}
	var problems []string
	for k := range fields {
		if !repoCredFields[k] {
			problems = append(problems, fmt.Sprintf("field %q is not supported; remove it", k))
		}
	}
	if t := fields["type"]; t != "" && t != "git" && t != "helm" && t != "oci" {
		problems = append(problems, fmt.Sprintf("type %q: write git, helm or oci", t))
	}
	c := repoCred{source: source, url: strings.TrimSpace(fields["url"]), username: fields["username"],
		password: fields["password"], bearer: fields["bearerToken"]}
	var certProblems []string
	c.tlsCert, c.tlsKey, certProblems = parseTLSClientCert(fields)
	problems = append(problems, certProblems...)
	if c.url == "" {
		problems = append(problems, "field url is required")
	}
	insecure, err := parseBool(fields["insecure"])
	if err != nil {
		problems = append(problems, fmt.Sprintf("insecure %q: write true or false", fields["insecure"]))
	}
	c.insecure = insecure
	for _, f := range []struct {
		name string
		to   *bool
	}{{"enableOCI", &c.enableOCI}, {"insecureOCIForceHttp", &c.forceHTTP}} {
		if *f.to, err = parseBool(fields[f.name]); err != nil {
			problems = append(problems, fmt.Sprintf("%s %q: write true or false", f.name, fields[f.name]))
		}
	}
	if c.bearer != "" && c.password != "" {
		problems = append(problems, "give password or bearerToken, not both")
	}
	if key := fields["sshPrivateKey"]; key != "" {
		keys, err := gitssh.NewPublicKeys(gitssh.DefaultUsername, []byte(key), "")
		if err != nil {
			problems = append(problems, "sshPrivateKey: not an unencrypted PEM private key")
		} else {
			if knownHosts != "" {
				if keys.HostKeyCallback, err = gitssh.NewKnownHostsCallback(knownHosts); err != nil {
					problems = append(problems, fmt.Sprintf("known hosts %s: %v", knownHosts, err))
				}
			}
			c.ssh = keys
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return c, fmt.Errorf("repository credentials: %s: %s", source, strings.Join(problems, "; "))
	}
	return c, nil
}

// Auth returns the credential of the Secret for repoURL, else of the
// longest repo-creds prefix under which it falls, else Fallback's.
func (rc *RepoCreds) Auth(repoURL string) (transport.AuthMethod, error) {
	if c := rc.lookup(repoURL); c != nil {
		return c.auth(repoURL)
	}
	if rc.Fallback == nil {
		return nil, nil
	}
	return rc.Fallback.Auth(repoURL)
}

// lookup is the Secret for repoURL, else the longest repo-creds prefix
// under which it falls, else nil.
func (rc *RepoCreds) lookup(repoURL string) *repoCred {
	norm := NormalizeURL(repoURL)
	for i, c := range rc.repos {
		if NormalizeURL(c.url) == norm {
			return &rc.repos[i]
		}
	}
	for i, c := range rc.templates {
		if underPrefix(repoURL, c.url) {
			return &rc.templates[i]
		}
	}
	return nil
}

// underPrefix reports whether repoURL is prefix or lies under it at a path
// boundary: "https://git.example.com/team-a" covers ".../team-a/app.git"
// but not ".../team-a-evil/app.git".
func underPrefix(repoURL, prefix string) bool {
	if !strings.HasPrefix(repoURL, prefix) {
		return false
	}
	rest := repoURL[len(prefix):]
	return rest == "" || strings.HasSuffix(prefix, "/") || strings.HasSuffix(prefix, ":") ||
		rest[0] == '/' || rest == ".git"
}

func (c repoCred) auth(repoURL string) (transport.AuthMethod, error) {
	scheme, host, user, hasUserInfo := splitURL(repoURL)
	switch scheme {
	case "http", "https":
		if hasUserInfo || (c.password == "" && c.bearer == "") {
			return nil, nil
		}
		if scheme == "http" && !c.insecure {
			return nil, &PlainHTTPError{Host: host, Fix: "write insecure: \"true\" in " + c.source}
		}
		if c.bearer != "" {
			return &githttp.TokenAuth{Token: c.bearer}, nil
		}
		username := c.username
		if username == "" {
			username = "git"
		}
		return &githttp.BasicAuth{Username: username, Password: c.password}, nil
	case "ssh":
		if c.ssh == nil {
			return nil, nil
		}
		keys := *c.ssh
		if user != "" {
			keys.User = user
		}
		return &keys, nil
	}
	return nil, nil
}
