package deploy

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ferry-gitops/ferry/internal/kube"
)

// argocdNamespace is where components/argocd-namespace has the control
// worker read Argo CD's configuration.
const argocdNamespace = "argocd"

// createArgoCDNamespace creates Argo CD's namespace for real, as its
// installation would have.
func createArgoCDNamespace(t *testing.T, ctx context.Context, c *cluster) {
	t.Helper()
	createNamespace(t, ctx, c, argocdNamespace)
}

// tenantNamespace is the example region overlay's tenant (tenants.yaml).
const tenantNamespace = "team-a"

// createNamespace creates a namespace that is not Ferry's to install.
func createNamespace(t *testing.T, ctx context.Context, c *cluster, name string) {
	t.Helper()
	_, err := kubernetes.NewForConfigOrDie(c.cfg).CoreV1().Namespaces().Create(ctx,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err, "create Namespace %s", name)
	}
}

// inClusterConfig is what client-go's in-cluster config (ferry-worker's
// without a kubeconfig) builds from a pod's files, a token of the
// ServiceAccount of namespace ferry-system and this API server's CA,
// pointed at the local API server instead of kubernetes.default.svc.
func inClusterConfig(t *testing.T, ctx context.Context, admin *cluster, serviceAccount string) *rest.Config {
	t.Helper()
	tok, err := kubernetes.NewForConfigOrDie(admin.cfg).CoreV1().ServiceAccounts(namespace).CreateToken(ctx, serviceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: new(int64(600))}}, metav1.CreateOptions{})
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "token"), []byte(tok.Status.Token), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ca.crt"), admin.cfg.CAData, 0o600))
	// client-go re-reads the token file as the kubelet rotates it.
	return &rest.Config{
		Host:            admin.cfg.Host,
		BearerTokenFile: filepath.Join(dir, "token"),
		TLSClientConfig: rest.TLSClientConfig{CAFile: filepath.Join(dir, "ca.crt")},
	}
}

// controlConfig is the admin's config of the stack's control cluster, where
// namespace argocd and the CRDs of deploy/crds are.
func controlConfig(t *testing.T) *rest.Config {
	t.Helper()
	if stack == nil {
		t.Skip("-short: no API server")
	}
	cfg, err := kube.LoadConfig(stack.Kubeconfig, stack.ControlContext)
	require.NoError(t, err)
	return cfg
}

// asControlWorker installs the control overlay's ServiceAccount with
// components/argocd-namespace's Roles and RoleBindings for real in the
// control cluster (Argo CD's, which the component is for), and returns the
// admin and the ServiceAccount's in-cluster config.
func asControlWorker(t *testing.T, ctx context.Context) (admin *cluster, sa *rest.Config) {
	t.Helper()
	admin = connect(t, controlConfig(t))
	createArgoCDNamespace(t, ctx, admin)
	r := rendered{t: t, objs: render(t, variant{overlay: "overlays/example/control", argocd: true})}
	for _, kind := range []string{"Namespace", "ServiceAccount", "Role", "RoleBinding"} {
		for _, o := range r.objs {
			if o.GetKind() == kind {
				_, err := admin.apply(ctx, o, false)
				require.NoError(t, err, "apply %s %s", kind, o.GetName())
			}
		}
	}
	return admin, inClusterConfig(t, ctx, admin, "ferry-control")
}

// TestControlWorkerReadsArgoCDConfig: with components/argocd-namespace
// installed for real, the control worker's ServiceAccount makes the reads
// its flags ask for (the repository Secrets by their label, the
// notifications ConfigMap and Secret listed and watched by name, as the
// worker's informers do) in Argo CD's namespace, and nothing else: no
// Secret of another namespace, no write.
func TestControlWorkerReadsArgoCDConfig(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin, saConfig := asControlWorker(t, ctx)
	clients := kubernetes.NewForConfigOrDie(admin.cfg)
	_, err := clients.CoreV1().ConfigMaps(argocdNamespace).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "argocd-notifications-cm"}, Data: map[string]string{"service.webhook.ops": "url: http://ops.example.com"}},
		metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	sa := kubernetes.NewForConfigOrDie(saConfig)

	// The repository Secrets, by label (--repo-creds-namespace).
	_, err = sa.CoreV1().Secrets(argocdNamespace).List(ctx, metav1.ListOptions{LabelSelector: "argocd.argoproj.io/secret-type"})
	require.NoError(t, err, "list the repository Secrets")
	// The notifications ConfigMap and Secret, as the informers ask.
	byName := func(name string) metav1.ListOptions {
		return metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()}
	}
	cms, err := sa.CoreV1().ConfigMaps(argocdNamespace).List(ctx, byName("argocd-notifications-cm"))
	require.NoError(t, err, "list argocd-notifications-cm")
	assert.Len(t, cms.Items, 1)
	w, err := sa.CoreV1().ConfigMaps(argocdNamespace).Watch(ctx, byName("argocd-notifications-cm"))
	require.NoError(t, err, "watch argocd-notifications-cm")
	w.Stop()
	w, err = sa.CoreV1().Secrets(argocdNamespace).Watch(ctx, byName("argocd-notifications-secret"))
	require.NoError(t, err, "watch argocd-notifications-secret")
	w.Stop()

	// Nothing else.
	_, err = sa.CoreV1().Secrets(namespace).List(ctx, metav1.ListOptions{})
	assert.True(t, apierrors.IsForbidden(err), "Secrets of %s: %v", namespace, err)
	_, err = sa.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{})
	assert.True(t, apierrors.IsForbidden(err), "Secrets of default: %v", err)
	_, err = sa.CoreV1().ConfigMaps(argocdNamespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "written"}}, metav1.CreateOptions{})
	assert.True(t, apierrors.IsForbidden(err), "create a ConfigMap in %s: %v", argocdNamespace, err)
	_, err = sa.CoreV1().ConfigMaps(argocdNamespace).Update(ctx, &cms.Items[0], metav1.UpdateOptions{})
	assert.True(t, apierrors.IsForbidden(err), "update argocd-notifications-cm: %v", err)
}
