package devenv

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// The objects an Argo CD install has before its controller starts, as its
// install manifests make them: the CRDs of its release, its namespace,
// argocd-cm and argocd-secret (its settings, which it finds by the
// part-of label), the default AppProject (its API server makes it; the
// stack runs none), and a cluster Secret per region.

// ArgoCDProjectResource is the AppProjects of an Argo CD install.
var ArgoCDProjectResource = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "appprojects"}

// ArgoCDAppResource is the Applications of an Argo CD install.
var ArgoCDAppResource = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"}

const argoCDManager = "ferry-dev"

var partOfArgoCD = map[string]string{"app.kubernetes.io/part-of": "argocd"}

func (s *Stack) installArgoCD(ctx context.Context, home *region, webhookSecret string) error {
	rc := home.restConfig()
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	if err := installCRDFiles(ctx, dyn, filepath.Join(s.ToolsBin, "argocd-crds")); err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ArgoCDNamespace}}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", ArgoCDNamespace, err)
	}
	key := rand.Text()
	objects := []any{
		&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "argocd-cm", Namespace: ArgoCDNamespace, Labels: partOfArgoCD}},
		&corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Name: "argocd-secret", Namespace: ArgoCDNamespace, Labels: partOfArgoCD},
			StringData: argoCDSecret(key, webhookSecret)},
		map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
			"metadata": map[string]any{"name": "default", "namespace": ArgoCDNamespace},
			"spec": map[string]any{"sourceRepos": []any{"*"},
				"destinations":             []any{map[string]any{"server": "*", "namespace": "*"}},
				"clusterResourceWhitelist": []any{map[string]any{"group": "*", "kind": "*"}}}},
	}
	for _, r := range s.regionOrder {
		secret, err := argoCDClusterSecret(r)
		if err != nil {
			return err
		}
		objects = append(objects, secret)
	}
	for _, o := range objects {
		if err := applyObject(ctx, dyn, o); err != nil {
			return err
		}
	}
	return nil
}

// argoCDClusterSecret is region r as Argo CD's cluster Secret: its name,
// server URL and admin token with the CA that signed its serving cert.
func argoCDClusterSecret(r *region) (*corev1.Secret, error) {
	config, err := json.Marshal(map[string]any{
		"bearerToken":     r.pki.adminToken,
		"tlsClientConfig": map[string]any{"caData": r.pki.caPEM},
	})
	if err != nil {
		return nil, err
	}
	return &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "cluster-" + r.name, Namespace: ArgoCDNamespace,
			Labels: map[string]string{"argocd.argoproj.io/secret-type": "cluster"}},
		StringData: map[string]string{"name": r.name, "server": r.server, "config": string(config)},
	}, nil
}

// applyObject applies o (a typed object with its TypeMeta, or a map) as
// the dev stack's field manager.
func applyObject(ctx context.Context, dyn dynamic.Interface, o any) error {
	data, err := json.Marshal(o)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(data, &u.Object); err != nil {
		return err
	}
	gvk := u.GroupVersionKind()
	resource := map[string]string{"ConfigMap": "configmaps", "Secret": "secrets", "AppProject": "appprojects"}[gvk.Kind]
	gvr := gvk.GroupVersion().WithResource(resource)
	_, err = dyn.Resource(gvr).Namespace(u.GetNamespace()).Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: argoCDManager, Force: true})
	if err != nil {
		return fmt.Errorf("apply %s %s/%s: %w", gvk.Kind, u.GetNamespace(), u.GetName(), err)
	}
	return nil
}

// installCRDFiles applies the CRDs of dir's YAML files and waits until
// each is established.
func installCRDFiles(ctx context.Context, dyn dynamic.Interface, dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no CRDs in %s (hack/tools.sh argocd copies them there)", dir)
	}
	crds := dyn.Resource(crdResource)
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &u.Object); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if _, err := crds.Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: argoCDManager, Force: true}); err != nil {
			return fmt.Errorf("install CRD %s: %w", u.GetName(), err)
		}
		if err := waitEstablished(ctx, crds, u.GetName()); err != nil {
			return err
		}
	}
	return nil
}

func waitEstablished(ctx context.Context, crds dynamic.ResourceInterface, name string) error {
	ctx, cancel := context.WithTimeout(ctx, apiserverTimeout)
	defer cancel()
	for {
		err := established(ctx, crds, name)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("CRD %s: %w (last: %v)", name, ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// argoCDSecret is argocd-secret's data: the server's signing key and,
// when given, the secret GitHub's push deliveries are signed with.
func argoCDSecret(key, webhookSecret string) map[string]string {
	data := map[string]string{"server.secretkey": key}
	if webhookSecret != "" {
		data["webhook.github.secret"] = webhookSecret
	}
	return data
}
