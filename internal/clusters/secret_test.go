package clusters

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/internal/regions"
)

// testCA is a self-signed CA certificate, PEM.
func testCA(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func secret(data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "prod",
		Labels:      map[string]string{SecretTypeLabel: SecretTypeCluster, "env": "prod"},
		Annotations: map[string]string{"team": "red", lastApplied: "{}"}}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

// Every form of Argo CD's config becomes the rest.Config client-go builds.
func TestFromSecretConfigForms(t *testing.T) {
	ca := base64.StdEncoding.EncodeToString(testCA(t))
	for _, tc := range []struct {
		name, config string
		check        func(c Cluster) string
	}{
		{"bearer token and CA", `{"bearerToken": "tok", "tlsClientConfig": {"caData": "` + ca + `", "serverName": "api.prod"}}`, func(c Cluster) string {
			if c.Config.BearerToken != "tok" || len(c.Config.CAData) == 0 || c.Config.ServerName != "api.prod" {
				return "token, CA or server name lost"
			}
			return ""
		}},
		{"username and password, insecure", `{"username": "admin", "password": "pw", "tlsClientConfig": {"insecure": true}}`, func(c Cluster) string {
			if c.Config.Username != "admin" || c.Config.Password != "pw" || !c.Config.Insecure {
				return "basic auth or insecure lost"
			}
			return ""
		}},
		{"exec plugin", `{"execProviderConfig": {"command": "aws", "args": ["eks", "get-token"], "env": {"AWS_PROFILE": "prod"}, "apiVersion": "client.authentication.k8s.io/v1beta1", "installHint": "install aws"}, "tlsClientConfig": {"caData": "` + ca + `"}}`, func(c Cluster) string {
			e := c.Config.ExecProvider
			if e == nil || e.Command != "aws" || len(e.Args) != 2 || len(e.Env) != 1 || e.Env[0].Name != "AWS_PROFILE" || e.InstallHint != "install aws" {
				return "exec config lost"
			}
			return ""
		}},
	} {
		c := FromSecret(secret(map[string]string{"name": "prod", "server": "https://10.0.0.1:6443", "project": "team-a", "config": tc.config}))
		if c.Err != nil {
			t.Errorf("%s: %v", tc.name, c.Err)
			continue
		}
		if c.Config.Host != "https://10.0.0.1:6443" {
			t.Errorf("%s: host %q", tc.name, c.Config.Host)
		}
		if msg := tc.check(c); msg != "" {
			t.Errorf("%s: %s: %+v", tc.name, msg, c.Config)
		}
		want := regions.Region{Name: "prod", Server: "https://10.0.0.1:6443", Project: "team-a",
			Labels: map[string]string{"env": "prod"}, Annotations: map[string]string{"team": "red"}}
		if got, _ := json.Marshal(c.Region); string(got) != mustJSON(want) {
			t.Errorf("%s: region %s, want %s", tc.name, got, mustJSON(want))
		}
	}
}

// Bad input: every problem at once, each naming the Secret and the field,
// and never a credential's value.
func TestFromSecretProblems(t *testing.T) {
	c := FromSecret(secret(map[string]string{"name": "prod", "server": "https://10.0.0.1:6443", "namespaces": "a,b",
		"config": `{"bearerToken": "s3cr3t-value", "awsAuthConfig": {"clusterName": "x"}, "tlsClientConfig": {"caData": "` +
			base64.StdEncoding.EncodeToString([]byte("not a certificate")) + `", "certData": "` + base64.StdEncoding.EncodeToString([]byte("x")) +
			`", "insecure": true, "verify": true}, "execProviderConfig": {"args": ["get-token"]}}`}))
	if c.Err == nil || c.Config != nil {
		t.Fatal("a config with problems was accepted")
	}
	for _, want := range []string{
		"cluster Secret argocd/prod",
		"data.namespaces: no such key",
		"data.config.awsAuthConfig: AWS IAM authentication is not carried",
		"data.config.tlsClientConfig.verify: Ferry's kubeconfig has no such setting",
		"data.config.tlsClientConfig.caData: holds no PEM certificate",
		"data.config.tlsClientConfig.insecure: true beside caData",
		"certData and keyData go together",
		"data.config.execProviderConfig.command: required",
		"data.config.execProviderConfig.apiVersion: required",
	} {
		if !strings.Contains(c.Err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, c.Err)
		}
	}
	if strings.Contains(c.Err.Error(), "s3cr3t") {
		t.Errorf("the error repeats the token: %v", c.Err)
	}
	if c.Region.Name != "prod" || c.Region.Server == "" {
		t.Errorf("the region of a Secret with a bad config is still known: %+v", c.Region)
	}
	for config, want := range map[string]string{
		"":                                       "data.config: required",
		"[1]":                                    "data.config: not a JSON object",
		`{"tlsClientConfig": {"caData": 5}}`:     "data.config.tlsClientConfig: cannot unmarshal number",
		`{"tlsClientConfig": {"caData": "%%%"}}`: "data.config.tlsClientConfig: illegal base64",
		`{"username": "u"}`:                      "username and password go together",
	} {
		c := FromSecret(secret(map[string]string{"name": "prod", "server": "https://10.0.0.1:6443", "config": config}))
		if c.Err == nil || !strings.Contains(c.Err.Error(), want) {
			t.Errorf("config %s: %v, want %q", config, c.Err, want)
		}
	}
}

// A Secret that NewSecret writes reads back as the same cluster, and a
// change of its connection changes the digest, a change of its labels not.
func TestNewSecretRoundTrip(t *testing.T) {
	r := regions.Region{Name: "prod", Server: "https://10.0.0.1:6443", Labels: map[string]string{"env": "prod"}, Project: "team-a"}
	s, err := NewSecret("argocd", SecretName(r.Server), r, Config{BearerToken: "tok", TLS: TLSConfig{CAData: testCA(t)}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.Name, "cluster-10.0.0.1-") {
		t.Errorf("Secret name %q", s.Name)
	}
	c := FromSecret(s)
	if c.Err != nil || c.Region.Name != "prod" || c.Region.Labels["env"] != "prod" || c.Region.Project != "team-a" || c.Config.BearerToken != "tok" {
		t.Fatalf("read back: %+v, %v", c.Region, c.Err)
	}
	s.Labels["env"] = "staging"
	if again := FromSecret(s); again.Digest != c.Digest {
		t.Error("a label changed the connection's digest")
	}
	s.Data["config"] = []byte(`{"bearerToken": "other"}`)
	if again := FromSecret(s); again.Digest == c.Digest {
		t.Error("a new token left the digest as it was")
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
