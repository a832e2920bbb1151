package objects

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/e2e/e2etest"
	"github.com/ferry-gitops/ferry/internal/app"
)

// clusterApp is an Argo CD Application to the cluster called cluster, by
// destination.name, with automated sync.
const clusterApp = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: %[1]s
  namespace: argocd
spec:
  project: default
  source: {repoURL: %[2]s, targetRevision: HEAD, path: app}
  destination: {name: %[3]s, namespace: %[1]s}
  syncPolicy:
    automated: {prune: true}
    syncOptions: [CreateNamespace=true]
`

// clusterSet is an ApplicationSet whose clusters generator selects the
// clusters labelled env=prod.
const clusterSet = `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: prod-clusters
  namespace: argocd
spec:
  generators:
  - clusters:
      selector:
        matchLabels: {env: prod}
  template:
    metadata:
      name: '{{name}}-fleet'
    spec:
      project: default
      source: {repoURL: %s, targetRevision: HEAD, path: app}
      destination: {server: '{{server}}', namespace: fleet}
      syncPolicy:
        automated: {}
        syncOptions: [CreateNamespace=true]
`

// TestClusterSecretsAreRegions: a worker started with region us-east-1
// alone gets eu-west-1 from a cluster Secret that ferry cluster add writes
// (as argocd cluster add does), without a restart: an app targeting it
// syncs there, and an ApplicationSet's clusters generator selects it by
// its label. Removing the Secret takes the region away: the set's app
// there is deleted, its resources left, and a new app to it is refused. A cluster Secret with a CA that
// does not sign the server's certificate is a region its apps show
// Unreachable with the TLS reason, while us-east-1 syncs on.
func TestClusterSecretsAreRegions(t *testing.T) {
	newEnv(t)
	e := &e2etest.Env{Stack: stack, Regions: []string{"us-east-1"}}
	e.StartWorker(t, "--control", "--region", "us-east-1")
	repo := e.NewRepo(t, "cluster-secrets")
	repo.Write(map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-git}\ndata: {v: one}\n"})
	sha := repo.CommitAndPush("one")
	c := e.TemporalClient(t)
	waitSynced := func(name string) {
		t.Helper()
		e2etest.Eventually(t, 3*time.Minute, name+" Synced and Healthy at "+e2etest.Short(sha), func() (bool, string) {
			v, err := e2etest.Query(c, name)
			if err != nil {
				return false, err.Error()
			}
			return v.Status.Sync.Status == app.SyncStatusSynced && v.Status.Health.Status == app.HealthHealthy && v.Status.Sync.Revision == sha,
				fmt.Sprint(v.Status.Sync, v.Status.Health, v.Status.Regions)
		})
	}

	out, err := e.Ferry(t, "app", "apply", "-f", writeTemp(t, fmt.Sprintf(clusterApp, "to-eu", repo.URL, "eu-west-1")))
	require.Error(t, err, "eu-west-1 is no region of this worker yet: %s", out)
	require.Contains(t, out, `unknown region "eu-west-1"`)

	out = e.MustFerry(t, "cluster", "add", "eu-west-1", "--label", "env=prod", "--annotation", "team=platform")
	require.Contains(t, out, `Cluster "eu-west-1"`)
	server := stackServer(t, e, "eu-west-1")
	out = e.MustFerry(t, "cluster", "list")
	require.Regexp(t, `eu-west-1\s+`+server+`\s+-\s+env=prod\s+Successful`, out)
	// argocd cluster add's identity in the added cluster.
	_, err = e.KubeClient(t, "eu-west-1").CoreV1().ServiceAccounts("kube-system").Get(context.Background(), "argocd-manager", metav1.GetOptions{})
	require.NoError(t, err, "the argocd-manager ServiceAccount")

	// The worker learns the region as the Secret is written: the app syncs there.
	e2etest.Eventually(t, time.Minute, "ferry app apply accepts eu-west-1", func() (bool, string) {
		out, err := e.Ferry(t, "app", "apply", "-f", writeTemp(t, fmt.Sprintf(clusterApp, "to-eu", repo.URL, "eu-west-1")))
		return err == nil, out
	})
	waitSynced("to-eu")
	cm, err := e.KubeClient(t, "eu-west-1").CoreV1().ConfigMaps("to-eu").Get(context.Background(), "from-git", metav1.GetOptions{})
	require.NoError(t, err, "the app's ConfigMap in eu-west-1")
	require.Equal(t, "one", cm.Data["v"])

	// The clusters generator selects it by label, and addresses it by server.
	mustKubectl(t, fmt.Sprintf(clusterSet, repo.URL), "apply", "-f", "-")
	waitSynced("eu-west-1-fleet")
	_, err = e.KubeClient(t, "eu-west-1").CoreV1().ConfigMaps("fleet").Get(context.Background(), "from-git", metav1.GetOptions{})
	require.NoError(t, err, "the set's app synced to eu-west-1")
	_, err = e2etest.Query(c, "us-east-1-fleet")
	require.Error(t, err, "us-east-1 has no label env=prod: no app of the set")

	// Removed: the set no longer generates its app, which goes without
	// touching the cluster that is gone (as Argo CD deletes an app whose
	// cluster is gone), and the region is refused.
	mustKubectl(t, "", "delete", "application", "to-eu")
	out = e.MustFerry(t, "cluster", "rm", server)
	require.Contains(t, out, "removed")
	require.NotContains(t, e.MustFerry(t, "cluster", "list"), "eu-west-1")
	e2etest.Eventually(t, 3*time.Minute, "the set's app deleted with its cluster gone", func() (bool, string) {
		_, err := e2etest.Query(c, "eu-west-1-fleet")
		return err != nil && strings.Contains(err.Error(), "not found"), fmt.Sprint(err)
	})
	_, err = e.KubeClient(t, "eu-west-1").CoreV1().ConfigMaps("fleet").Get(context.Background(), "from-git", metav1.GetOptions{})
	require.NoError(t, err, "the set's app's resources stay in the cluster that is gone")
	e.RecordHistories(t, contract.WorkflowID("eu-west-1-fleet"), "delete-gone-region")
	mustKubectl(t, "", "delete", "applicationset", "prod-clusters")
	e2etest.Eventually(t, time.Minute, "ferry app apply refuses eu-west-1 again", func() (bool, string) {
		out, err := e.Ferry(t, "app", "apply", "-f", writeTemp(t, fmt.Sprintf(clusterApp, "to-eu-again", repo.URL, "eu-west-1")))
		return err != nil && strings.Contains(out, `unknown region "eu-west-1"`), out
	})
	// An app naming a region before its Secret is there is refused; the
	// Secret's arrival makes the same object valid, untouched.
	mustKubectl(t, fmt.Sprintf(clusterApp, "to-bad-ca", repo.URL, "bad-ca"), "apply", "-f", "-")
	waitObject(t, "to-bad-ca", time.Minute, `InvalidSpecError: unknown region "bad-ca"`, func(o object) bool {
		for _, c := range o.Status.Conditions {
			if c.Type == "InvalidSpecError" && strings.Contains(c.Message, `unknown region "bad-ca"`) {
				return true
			}
		}
		return false
	})
	// A CA that did not sign the server's certificate: Unreachable, with why.
	badCA, err := json.Marshal(map[string]any{"bearerToken": "not-used", "tlsClientConfig": map[string]any{"caData": otherCA(t)}})
	require.NoError(t, err)
	mustKubectl(t, fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata:
  name: cluster-bad-ca
  namespace: argocd
  labels: {argocd.argoproj.io/secret-type: cluster}
stringData:
  name: bad-ca
  server: %s
  config: '%s'
`, server, badCA), "apply", "-f", "-")
	e2etest.Eventually(t, time.Minute, "the object of to-bad-ca valid with the region there", func() (bool, string) {
		_, err := e2etest.Query(c, "to-bad-ca")
		return err == nil, fmt.Sprint(err)
	})
	e.MustFerry(t, "app", "apply", "-f", writeTemp(t, fmt.Sprintf(clusterApp, "to-us", repo.URL, "us-east-1")))
	e2etest.Eventually(t, 3*time.Minute, "to-bad-ca Unreachable with the TLS reason", func() (bool, string) {
		v, err := e2etest.Query(c, "to-bad-ca")
		if err != nil {
			return false, err.Error()
		}
		r := v.Status.Regions["bad-ca"]
		return r.Unreachable && strings.Contains(r.Message, "certificate signed by unknown authority"), fmt.Sprint(v.Status.Regions)
	})
	waitSynced("to-us")
	require.Regexp(t, `bad-ca\s+\S+\s+-\s+-\s+Failed\s+.*certificate signed by unknown authority`, e.MustFerry(t, "cluster", "list"))
	mustKubectl(t, "", "delete", "secret", "cluster-bad-ca")
}

// stackServer is the API server URL of the stack's region.
func stackServer(t *testing.T, e *e2etest.Env, region string) string {
	t.Helper()
	rc, err := e.Stack.RestConfig(region)
	require.NoError(t, err)
	return strings.TrimSuffix(rc.Host, "/")
}

// otherCA is the base64 PEM (as a cluster Secret's caData) of a CA that signed nothing of the stack's.
func otherCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "not-the-stack"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	return base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	path := fmt.Sprintf("%s/%d.yaml", t.TempDir(), time.Now().UnixNano())
	require.NoError(t, writeFile(path, content))
	return path
}
