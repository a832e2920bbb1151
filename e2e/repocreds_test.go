package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/gitsource/gittest"
	"github.com/ferry-gitops/ferry/internal/pkitest"
)

// TestRepoCredsFromNamespaceOverMutualTLS: a Git server that requires a
// client certificate, with a certificate of its own CA; the repository
// Secret (tlsClientCertData, tlsClientCertKey) and argocd-tls-certs-cm live
// in namespace argocd of the control cluster, where the worker reads them
// with --repo-creds-namespace. The app syncs, and the server saw the
// Secret's certificate.
func TestRepoCredsFromNamespaceOverMutualTLS(t *testing.T) {
	serverCA, clientCA := pkitest.NewCA(t, "git-server-ca"), pkitest.NewCA(t, "git-client-ca")
	robot := clientCA.Issue(t, pkitest.Client, "ferry-robot")
	srv := gittest.NewTLSServer(t, serverCA.Issue(t, pkitest.Server, "127.0.0.1").TLS(t), clientCA.Pool(), true)
	w := srv.NewRepo(t, "private")
	sha := w.Commit("a ConfigMap", map[string]string{"app/cm.yaml": configMap("private", "v1")})
	w.Push()
	url := srv.URL("private")

	control := kubeClient(t, regions[0])
	ctx := context.Background()
	_, err := control.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "argocd"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = control.CoreV1().Namespaces().Delete(context.Background(), "argocd", metav1.DeleteOptions{})
	})
	_, err = control.CoreV1().Secrets("argocd").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "private-repo", Labels: map[string]string{gitsource.SecretTypeLabel: gitsource.SecretTypeRepo}},
		StringData: map[string]string{"url": url, "tlsClientCertData": string(robot.CertPEM), "tlsClientCertKey": string(robot.KeyPEM)},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = control.CoreV1().ConfigMaps("argocd").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: gitsource.TLSCertsConfigMap},
		Data:       map[string]string{"127.0.0.1": string(serverCA.CertPEM)},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	startWorker(t, append(allowHosts(t, url), "--repo-creds-namespace", "argocd", "--repo-creds-context", regions[0])...)
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("private", url, "app", "private", true, "3m")))
	waitApp(t, "private", sha, 2*time.Minute)
	for _, r := range regions {
		cm, err := kubeClient(t, r).CoreV1().ConfigMaps("private").Get(ctx, "private", metav1.GetOptions{})
		require.NoError(t, err, "region %s", r)
		require.Equal(t, "v1", cm.Data["version"])
	}
	require.Contains(t, srv.ClientCerts(), "ferry-robot", "the server saw the Secret's client certificate")
	mustFerry(t, "app", "delete", "private", "--cascade")
}

// TestGitCredentialOnlyToItsHost: the worker holds a repo-creds template
// for server A's prefix (and the environment token, bound to another
// host); an app of A syncs with the credential, an app whose repository is
// on server B (another port of the same machine, standing for another
// host) syncs too, and B records no Authorization header.
func TestGitCredentialOnlyToItsHost(t *testing.T) {
	a, b := gittest.NewServer(t), gittest.NewServer(t)
	a.User, a.Pass = "robot", "hunter2-token"
	wa, wb := a.NewRepo(t, "private"), b.NewRepo(t, "public")
	shaA := wa.Commit("a", map[string]string{"app/cm.yaml": configMap("cred-a", "v1")})
	wa.Push()
	shaB := wb.Commit("b", map[string]string{"app/cm.yaml": configMap("cred-b", "v1")})
	wb.Push()
	prefixA := strings.TrimSuffix(a.URL("private"), "/private.git")
	creds := writeDir(t, map[string]string{"creds.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: team-a\n  labels:\n" +
		"    argocd.argoproj.io/secret-type: repo-creds\nstringData:\n  url: " + prefixA + "\n  username: robot\n" +
		"  password: hunter2-token\n  insecure: \"true\"\n"})
	startWorkerEnv(t, []string{"FERRY_GIT_TOKEN=env-token", "FERRY_GIT_HOSTS=git.example.com"},
		append(allowHosts(t, a.URL("private"), b.URL("public")), "--repo-creds-dir", creds)...)
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("cred-a", a.URL("private"), "app", "cred-a", true, "3m")))
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("cred-b", b.URL("public"), "app", "cred-b", true, "3m")))
	waitApp(t, "cred-a", shaA, 2*time.Minute)
	waitApp(t, "cred-b", shaB, 2*time.Minute)
	require.NotEmpty(t, a.Authorizations(), "A got the credential: the test proves something")
	require.Empty(t, b.Authorizations(), "B got no Authorization header")
	mustFerry(t, "app", "delete", "cred-a", "--cascade")
	mustFerry(t, "app", "delete", "cred-b", "--cascade")
}
