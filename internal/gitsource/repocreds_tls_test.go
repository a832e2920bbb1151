package gitsource

import (
	"context"
	"strings"
	"testing"

	"github.com/ferry-gitops/ferry/internal/gitsource/gittest"
	"github.com/ferry-gitops/ferry/internal/pkitest"
)

// tlsCertsConfigMap is argocd-tls-certs-cm holding pem for each host.
func tlsCertsConfigMap(pem []byte, hosts ...string) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-tls-certs-cm\n  namespace: argocd\ndata:\n")
	for _, h := range hosts {
		b.WriteString("  " + h + ": |\n")
		for _, line := range strings.Split(strings.TrimSpace(string(pem)), "\n") {
			b.WriteString("    " + line + "\n")
		}
	}
	return b.String()
}

// TestRepoCredsTLSClientCertAndCA runs real fetches over HTTPS: server A
// requires a client certificate, B asks for one but needs none. A
// repository Secret's tlsClientCertData/tlsClientCertKey goes to A's URL
// alone; argocd-tls-certs-cm's CA makes both servers' certificates trusted.
func TestRepoCredsTLSClientCertAndCA(t *testing.T) {
	ctx := context.Background()
	serverCA, clientCA := pkitest.NewCA(t, "git-server-ca"), pkitest.NewCA(t, "git-client-ca")
	serving := serverCA.Issue(t, pkitest.Server, "127.0.0.1", "localhost").TLS(t)
	robot := clientCA.Issue(t, pkitest.Client, "ferry-robot")
	a := gittest.NewTLSServer(t, serving, clientCA.Pool(), true)
	b := gittest.NewTLSServer(t, serving, clientCA.Pool(), false)
	fxA, fxB := newFixtureRepo(t, a, "private"), newFixtureRepo(t, b, "public")
	newFixtureRepo(t, a, "uncovered")
	secret := credSecret("private", SecretTypeRepo, map[string]string{"url": fxA.url,
		"tlsClientCertData": string(robot.CertPEM), "tlsClientCertKey": string(robot.KeyPEM)})
	cm := tlsCertsConfigMap(serverCA.CertPEM, "127.0.0.1", "localhost")

	t.Run("without the CA the servers are not trusted", func(t *testing.T) {
		rc, err := LoadRepoCreds(writeCreds(t, map[string]string{"creds.yaml": secret}), "")
		if err != nil {
			t.Fatal(err)
		}
		_, err = newRepos(t, Options{Auth: rc}).Resolve(ctx, fxB.url, "main")
		if err == nil || !strings.Contains(err.Error(), "certificate") {
			t.Fatalf("Resolve without the CA: %v, want a certificate error", err)
		}
	})

	rc, err := LoadRepoCreds(writeCreds(t, map[string]string{"creds.yaml": secret, "certs.yaml": cm}), "")
	if err != nil {
		t.Fatal(err)
	}
	repos := newRepos(t, Options{Auth: rc})
	sha, err := repos.Resolve(ctx, fxA.url, "main")
	if err != nil || sha != fxA.a {
		t.Fatalf("Resolve on A = %s, %v", sha, err)
	}
	if _, release, err := repos.Checkout(ctx, fxA.url, sha); err != nil {
		t.Fatalf("Checkout on A: %v", err)
	} else {
		release()
	}
	if got := a.ClientCerts(); len(got) == 0 || got[0] != "ferry-robot" {
		t.Fatalf("A received client certificates %v, want ferry-robot's", got)
	}
	// A demands the certificate: a repository of A no Secret covers fails.
	if _, err := repos.Resolve(ctx, strings.Replace(fxA.url, "private", "uncovered", 1), "main"); err == nil {
		t.Fatal("Resolve of a repo of A without the client certificate: no error; the test proves nothing")
	}
	for _, u := range []string{fxB.url, strings.Replace(fxB.url, "127.0.0.1", "localhost", 1)} {
		if _, err := repos.Resolve(ctx, u, "main"); err != nil {
			t.Fatalf("Resolve on B (%s): %v", u, err)
		}
		if _, release, err := repos.Checkout(ctx, u, fxB.a); err != nil {
			t.Fatalf("Checkout on B (%s): %v", u, err)
		} else {
			release()
		}
	}
	if got := b.ClientCerts(); len(got) != 0 {
		t.Fatalf("B received client certificates %v, want none", got)
	}
}

func TestRepoCredsTLSErrors(t *testing.T) {
	ca := pkitest.NewCA(t, "ca")
	robot := ca.Issue(t, pkitest.Client, "robot")
	other := ca.Issue(t, pkitest.Client, "other")
	dir := writeCreds(t, map[string]string{
		"creds.yaml": credSecret("half", SecretTypeRepo, map[string]string{"url": "https://git.example.com/a.git",
			"tlsClientCertData": string(robot.CertPEM)}) + "---\n" +
			credSecret("mismatch", SecretTypeRepo, map[string]string{"url": "https://git.example.com/b.git",
				"tlsClientCertData": string(robot.CertPEM), "tlsClientCertKey": string(other.KeyPEM)}),
		"certs.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-tls-certs-cm\ndata:\n  git.example.com: not a certificate\n",
	})
	_, err := LoadRepoCreds(dir, "")
	for _, want := range []string{`Secret "half"`, "give tlsClientCertData and tlsClientCertKey together",
		`Secret "mismatch"`, "not a PEM certificate and its private key",
		`ConfigMap "argocd-tls-certs-cm"`, `key "git.example.com": no PEM certificate`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("LoadRepoCreds: %v, want %q", err, want)
		}
	}
	if err != nil && strings.Contains(err.Error(), "PRIVATE KEY") {
		t.Error("the error holds the key")
	}
}
