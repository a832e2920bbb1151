// Package deploy holds the Kustomize manifests that run ferry-worker in real
// clusters. Its tests render every example overlay with krusty, check the
// workers' command lines and environment, and have a real kube-apiserver (the
// local stack's) accept every object with a server-side dry-run. The region
// worker's RBAC is checked by acting as its ServiceAccount.
package deploy

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/internal/devenv"
	"github.com/ferry-gitops/ferry/internal/kube"
)

const (
	// serviceAccountDir is where the kubelet mounts a pod's ServiceAccount
	// token and CA, and where client-go's in-cluster config reads them.
	serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

	region       = "us-east-1"
	namespace    = "ferry-system"
	fieldManager = "ferry-deploy-test"
	tlsDir       = "/etc/ferry/tls"
)

var stack *devenv.Stack

// pinnedImage is the overlays' image: the operator's repository and the
// digest make image wrote, so every pod runs exactly the image built.
var pinnedImage = regexp.MustCompile(`^registry\.example\.com/ferry/ferry-worker@sha256:[0-9a-f]{64}$`)

// TestMain starts one real control plane for the package; with -short only
// the rendering tests run.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	os.Exit(devenv.RunTests(m, devenv.Options{Regions: []string{region}, Control: true}, &stack))
}

// variant is one kustomization to render: an example overlay, alone or with
// components (temporal-tls, single-tenant).
type variant struct {
	name         string
	overlay      string // under deploy/
	tls          bool
	singleTenant bool   // region only
	argocd       bool   // control only: components/argocd-namespace
	appNS        bool   // control only: components/app-namespaces, with argocd
	server       bool   // control only: components/ferry-server, with argocd
	role         string // "control" or "region"
}

var (
	regionOverlay = "overlays/example/region-us-east-1"
	variants      = []variant{
		{name: "control", overlay: "overlays/example/control", role: "control"},
		{name: "region", overlay: regionOverlay, role: "region"},
		{name: "control+tls", overlay: "overlays/example/control", tls: true, role: "control"},
		{name: "control+argocd-namespace", overlay: "overlays/example/control", argocd: true, role: "control"},
		{name: "control+argocd-namespace+app-namespaces", overlay: "overlays/example/control", argocd: true, appNS: true, role: "control"},
		{name: "region+tls", overlay: regionOverlay, tls: true, role: "region"},
		{name: "region+single-tenant", overlay: regionOverlay, singleTenant: true, role: "region"},
		{name: "region+single-tenant+tls", overlay: regionOverlay, singleTenant: true, tls: true, role: "region"},
	}
)

func (v variant) components() []string {
	var out []string
	if v.tls {
		out = append(out, "components/temporal-tls")
	}
	if v.singleTenant {
		out = append(out, "components/single-tenant")
	}
	if v.argocd {
		out = append(out, "components/argocd-namespace")
	}
	if v.appNS {
		out = append(out, "components/app-namespaces")
	}
	if v.server {
		out = append(out, "components/ferry-server")
	}
	return out
}

// render builds the variant with krusty, as `kubectl apply -k` would. A
// variant with components is a kustomization in a temp dir over the
// overlay, with the components.
func render(t *testing.T, v variant) []*unstructured.Unstructured {
	t.Helper()
	dir, err := filepath.Abs(v.overlay)
	require.NoError(t, err)
	if components := v.components(); len(components) > 0 {
		// Kustomize takes relative paths only.
		tmp := t.TempDir()
		relDir, err := filepath.Rel(tmp, dir)
		require.NoError(t, err)
		k := fmt.Sprintf("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - %s\n%scomponents:\n", relDir, overlayImages(t, dir, v))
		for _, c := range components {
			abs, err := filepath.Abs(c)
			require.NoError(t, err)
			rel, err := filepath.Rel(tmp, abs)
			require.NoError(t, err)
			k += "  - " + rel + "\n"
		}
		require.NoError(t, os.WriteFile(filepath.Join(tmp, "kustomization.yaml"), []byte(k), 0o644))
		dir = tmp
	}
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	require.NoError(t, err, "kustomize build %s", dir)
	var objs []*unstructured.Unstructured
	for _, r := range resMap.Resources() {
		// Through JSON, so that numbers are what a client sends (int64).
		b, err := r.MarshalJSON()
		require.NoError(t, err)
		obj := &unstructured.Unstructured{}
		require.NoError(t, obj.UnmarshalJSON(b))
		objs = append(objs, obj)
	}
	require.NotEmpty(t, objs)
	return objs
}

// overlayImages is the overlay's images: entry when a component adds a
// workload (ferry-server), so that it gets the image as it does in the
// overlay that includes it; else "".
func overlayImages(t *testing.T, dir string, v variant) string {
	t.Helper()
	if !v.server {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	require.NoError(t, err)
	var k struct {
		Images []map[string]string `json:"images"`
	}
	require.NoError(t, yaml.Unmarshal(b, &k))
	out, err := yaml.Marshal(map[string]any{"images": k.Images})
	require.NoError(t, err)
	return string(out)
}

// rendered is a variant's objects, by kind and name.
type rendered struct {
	t    *testing.T
	objs []*unstructured.Unstructured
}

func (r rendered) find(kind, name string) *unstructured.Unstructured {
	r.t.Helper()
	for _, o := range r.objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	r.t.Fatalf("no %s %s among the rendered objects", kind, name)
	return nil
}

func (r rendered) kinds() []string {
	var out []string
	for _, o := range r.objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	return out
}

func convert[T any](t *testing.T, obj *unstructured.Unstructured) *T {
	t.Helper()
	var out T
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj.Object, &out, true),
		"%s %s", obj.GetKind(), obj.GetName())
	return &out
}

// containerEnv is the environment the kubelet gives the container: envFrom
// first (ConfigMaps from the rendered set; optional Secrets are skipped),
// then env, which wins. Values from the downward API are marked.
func (r rendered) containerEnv(c corev1.Container) map[string]string {
	r.t.Helper()
	env := map[string]string{}
	for _, src := range c.EnvFrom {
		switch {
		case src.ConfigMapRef != nil:
			cm := convert[corev1.ConfigMap](r.t, r.find("ConfigMap", src.ConfigMapRef.Name))
			for k, v := range cm.Data {
				env[src.Prefix+k] = v
			}
		case src.SecretRef != nil:
			require.True(r.t, src.SecretRef.Optional != nil && *src.SecretRef.Optional,
				"Secret %s in envFrom must be optional: the manifests do not create it", src.SecretRef.Name)
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			env[e.Name] = "<valueFrom>"
			continue
		}
		env[e.Name] = e.Value
	}
	return env
}

// flagValue is the value of --name=value in args, and whether it is there.
func flagValue(args []string, name string) (string, bool) {
	for _, a := range args {
		if a == "--"+name {
			return "", true
		}
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// worker is the ferry-worker Deployment of a variant, checked for what every
// worker needs.
func (r rendered) worker(name string) (*appsv1.Deployment, corev1.Container, map[string]string) {
	t := r.t
	t.Helper()
	d := convert[appsv1.Deployment](t, r.find("Deployment", name))
	assert.Equal(t, namespace, d.Namespace)
	require.Len(t, d.Spec.Template.Spec.Containers, 1)
	c := d.Spec.Template.Spec.Containers[0]
	assert.Equal(t, "ferry-worker", c.Name)
	assert.Regexp(t, pinnedImage, c.Image, "the overlay's image, by the digest make image wrote")
	assert.Equal(t, []string{"ferry-worker"}, c.Command)
	require.NotNil(t, d.Spec.Replicas)
	assert.Equal(t, int32(2), *d.Spec.Replicas, "two workers poll each queue")

	// Labels select the pods; the temporal-tls component targets them too.
	podLabels := d.Spec.Template.Labels
	for k, v := range d.Spec.Selector.MatchLabels {
		assert.Equal(t, v, podLabels[k], "selector label %s", k)
	}
	assert.Equal(t, "ferry-worker", d.Labels["app.kubernetes.io/name"])

	// Every value the worker reads from its environment is set.
	env := r.containerEnv(c)
	assert.NotEmpty(t, env["FERRY_TEMPORAL_ADDRESS"])
	assert.Equal(t, "ferry", env["FERRY_NAMESPACE"], "the overlay's Temporal namespace")
	assert.Equal(t, "<valueFrom>", env["GOMEMLIMIT"])

	for _, a := range c.Args {
		assert.False(t, strings.HasPrefix(a, "--render-sandbox") || strings.HasPrefix(a, "--plugin-dir"), "%s: the pod sandbox admits no plugins", a)
	}
	if name == "ferry-region" {
		// A region worker renders nothing (the control workers hand it
		// the manifests): no sandbox, no gVisor.
		assert.Nil(t, d.Spec.Template.Spec.RuntimeClassName, "the region worker renders nothing: it needs no gVisor")
		assert.NotContains(t, env, "FERRY_RENDER_SANDBOX")
	} else {
		// Renders sandboxed: the pod runs on gVisor (a RuntimeClass of
		// handler runsc) and the worker trusts that pod as its render
		// sandbox, which it checks at start.
		require.NotNil(t, d.Spec.Template.Spec.RuntimeClassName, "the pod's runtime: without gVisor, pod mode has no sandbox")
		assert.Equal(t, "gvisor", *d.Spec.Template.Spec.RuntimeClassName)
		rc := r.find("RuntimeClass", "gvisor")
		assert.Equal(t, "runsc", rc.Object["handler"])
		assert.Equal(t, "pod", env["FERRY_RENDER_SANDBOX"])
	}

	// /healthz and /metrics on --metrics-addr, all interfaces, named "metrics".
	addr, ok := flagValue(c.Args, "metrics-addr")
	require.True(t, ok, "--metrics-addr: without it the worker serves no /healthz for the probes (metrics are off by default)")
	assert.Equal(t, ":9090", addr)
	assert.Contains(t, c.Ports, corev1.ContainerPort{Name: "metrics", ContainerPort: 9090, Protocol: corev1.ProtocolTCP})
	for what, p := range map[string]*corev1.Probe{"startup": c.StartupProbe, "readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		require.NotNil(t, p, "%s probe", what)
		require.NotNil(t, p.HTTPGet, "%s probe", what)
		assert.Equal(t, "/healthz", p.HTTPGet.Path, "%s probe", what)
		assert.Equal(t, "metrics", p.HTTPGet.Port.String(), "%s probe", what)
	}
	assert.NotEmpty(t, c.Resources.Requests.Cpu().String())
	assert.False(t, c.Resources.Requests.Memory().IsZero())
	assert.False(t, c.Resources.Limits.Memory().IsZero())

	// Non-root, read-only root file system; the Git cache and /tmp are
	// emptyDirs.
	ps := d.Spec.Template.Spec.SecurityContext
	require.NotNil(t, ps)
	require.NotNil(t, ps.RunAsNonRoot)
	assert.True(t, *ps.RunAsNonRoot)
	require.NotNil(t, c.SecurityContext)
	require.NotNil(t, c.SecurityContext.ReadOnlyRootFilesystem)
	assert.True(t, *c.SecurityContext.ReadOnlyRootFilesystem)
	require.NotNil(t, c.SecurityContext.AllowPrivilegeEscalation)
	assert.False(t, *c.SecurityContext.AllowPrivilegeEscalation)
	dirs := []string{"/tmp"}
	if name == "ferry-region" {
		// It clones nothing: no Git cache, and no Git credentials.
		_, ok := flagValue(c.Args, "cache-dir")
		assert.False(t, ok, "--cache-dir: the region worker clones nothing")
		for _, src := range c.EnvFrom {
			assert.Nil(t, src.SecretRef, "the region worker needs no Git credentials (Secret %v)", src.SecretRef)
		}
	} else {
		cacheDir, ok := flagValue(c.Args, "cache-dir")
		require.True(t, ok, "--cache-dir: the default is under $HOME, on the read-only root")
		dirs = append(dirs, cacheDir)
	}
	for _, dir := range dirs {
		v := volumeAt(t, d, c, dir)
		assert.NotNil(t, v.EmptyDir, "%s is an emptyDir", dir)
	}
	return d, c, env
}

// volumeAt is the volume mounted at dir.
func volumeAt(t *testing.T, d *appsv1.Deployment, c corev1.Container, dir string) corev1.Volume {
	t.Helper()
	for _, m := range c.VolumeMounts {
		if m.MountPath == dir {
			for _, v := range d.Spec.Template.Spec.Volumes {
				if v.Name == m.Name {
					return v
				}
			}
			t.Fatalf("volume %s mounted at %s does not exist", m.Name, dir)
		}
	}
	t.Fatalf("nothing is mounted at %s", dir)
	return corev1.Volume{}
}

func TestRenderedWorkers(t *testing.T) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			r := rendered{t: t, objs: render(t, v)}
			ns := r.find("Namespace", namespace)
			assert.Equal(t, "restricted", ns.GetLabels()["pod-security.kubernetes.io/enforce"])
			for _, o := range r.objs {
				assert.Equal(t, "ferry", o.GetLabels()["app.kubernetes.io/part-of"], "%s %s", o.GetKind(), o.GetName())
				switch o.GetKind() {
				case "Namespace", "ClusterRole", "ClusterRoleBinding", "RuntimeClass":
					assert.Empty(t, o.GetNamespace(), "%s %s", o.GetKind(), o.GetName())
				case "Role", "RoleBinding":
					want, where := argocdNamespace, "in Argo CD's namespace"
					if o.GetName() == "ferry-region-impersonate" {
						want, where = tenantNamespace, "in the example tenant's namespace"
					}
					assert.Equal(t, want, o.GetNamespace(), "%s %s: %s", o.GetKind(), o.GetName(), where)
				default:
					assert.Equal(t, namespace, o.GetNamespace(), "%s %s", o.GetKind(), o.GetName())
				}
			}

			var env map[string]string
			var d *appsv1.Deployment
			var c corev1.Container
			switch v.role {
			case "control":
				d, c, env = checkControl(t, r, v.argocd, v.appNS)
			case "region":
				d, c, env = checkRegion(t, r, v.singleTenant)
			}
			checkTLS(t, v.tls, d, c, env)
		})
	}
}

func checkControl(t *testing.T, r rendered, argocd, appNS bool) (*appsv1.Deployment, corev1.Container, map[string]string) {
	kinds := []string{"RuntimeClass/gvisor", "Namespace/ferry-system", "ServiceAccount/ferry-control",
		"ConfigMap/" + configMapName(t, r, "ferry-config"), "Deployment/ferry-control", "Service/ferry-control",
		"PodDisruptionBudget/ferry-control"}
	if argocd {
		kinds = append(kinds, "Role/ferry-control-argocd-config", "RoleBinding/ferry-control-argocd-config",
			"Role/ferry-control-applications", "RoleBinding/ferry-control-applications")
	}
	if appNS {
		kinds = append(kinds, "ClusterRole/ferry-control-app-namespaces", "ClusterRoleBinding/ferry-control-app-namespaces")
	}
	assert.ElementsMatch(t, kinds, r.kinds())

	d, c, env := r.worker("ferry-control")
	assert.Contains(t, c.Args, "--control")
	_, region := flagValue(c.Args, "region")
	assert.False(t, region, "the control worker serves no region")
	assert.Equal(t, "us-east-1,eu-west-1,ap-south-1", env["FERRY_REGIONS"])
	assert.Equal(t, "temporal.example.com:7233", env["FERRY_TEMPORAL_ADDRESS"])

	// The webhook on --webhook-addr, all interfaces, behind the Service.
	addr, ok := flagValue(c.Args, "webhook-addr")
	require.True(t, ok)
	assert.Equal(t, ":8080", addr)
	assert.Contains(t, c.Ports, corev1.ContainerPort{Name: "webhook", ContainerPort: 8080, Protocol: corev1.ProtocolTCP})
	svc := convert[corev1.Service](t, r.find("Service", "ferry-control"))
	for k, v := range svc.Spec.Selector {
		assert.Equal(t, v, d.Spec.Template.Labels[k], "Service selector %s", k)
	}
	ports := map[string]string{}
	for _, p := range svc.Spec.Ports {
		ports[p.Name] = fmt.Sprintf("%d->%s", p.Port, p.TargetPort.String())
	}
	assert.Equal(t, map[string]string{"webhook": "8080->webhook", "metrics": "9090->metrics"}, ports)

	// The control worker calls the Kubernetes API only with
	// components/argocd-namespace: to read Argo CD's configuration and to
	// work its Application objects.
	assert.Equal(t, "ferry-control", d.Spec.Template.Spec.ServiceAccountName)
	require.NotNil(t, d.Spec.Template.Spec.AutomountServiceAccountToken)
	assert.Equal(t, argocd, *d.Spec.Template.Spec.AutomountServiceAccountToken, "the ServiceAccount token is mounted")
	if argocd {
		assert.Equal(t, argocdNamespace, env["FERRY_REPO_CREDS_NAMESPACE"])
		assert.Equal(t, argocdNamespace, env["FERRY_NOTIFICATIONS_NAMESPACE"])
		assert.Equal(t, argocdNamespace, env["FERRY_CONTROL_NAMESPACE"])
		assert.NotContains(t, env, "FERRY_CONTROL_CONTEXT", "the Application objects are those of the cluster it runs in")
	} else {
		assert.NotContains(t, env, "FERRY_REPO_CREDS_NAMESPACE")
		assert.NotContains(t, env, "FERRY_NOTIFICATIONS_NAMESPACE")
		assert.NotContains(t, env, "FERRY_CONTROL_NAMESPACE")
	}
	return d, c, env
}

func checkRegion(t *testing.T, r rendered, singleTenant bool) (*appsv1.Deployment, corev1.Container, map[string]string) {
	assert.ElementsMatch(t, []string{"Namespace/ferry-system", "ServiceAccount/ferry-region",
		"ClusterRole/ferry-region", "ClusterRoleBinding/ferry-region",
		"ClusterRole/ferry-region-impersonate", "RoleBinding/ferry-region-impersonate",
		"ConfigMap/" + configMapName(t, r, "ferry-region-config"),
		"Deployment/ferry-region", "PodDisruptionBudget/ferry-region"}, r.kinds())

	d, c, env := r.worker("ferry-region")
	assert.NotContains(t, c.Args, "--control")
	// The region is FERRY_REGION, --region's twin, set by the overlay alone:
	// a --region flag would win over it, so an overlay's FERRY_REGION would
	// then be ignored.
	assert.Equal(t, region, env["FERRY_REGION"])
	_, ok := flagValue(c.Args, "region")
	assert.False(t, ok, "a --region flag would override the overlay's FERRY_REGION")
	assert.Equal(t, "ferry-region", d.Spec.Template.Spec.ServiceAccountName)
	if a := d.Spec.Template.Spec.AutomountServiceAccountToken; a != nil {
		assert.True(t, *a, "the region worker authenticates with its ServiceAccount token")
	}

	// Its cluster is the one it runs in: with no kubeconfig, ferry-worker
	// uses client-go's in-cluster config, the pod's ServiceAccount token and
	// CA at their usual path.
	for _, name := range []string{"FERRY_KUBECONFIG", "KUBECONFIG", "FERRY_CONTEXT"} {
		assert.NotContains(t, env, name, "a kubeconfig would stand in for the in-cluster config")
	}
	for _, name := range []string{"kubeconfig", "context"} {
		_, ok := flagValue(c.Args, name)
		assert.False(t, ok, "--%s: the region worker uses the in-cluster config", name)
	}
	for _, m := range c.VolumeMounts {
		assert.False(t, strings.HasPrefix(serviceAccountDir, m.MountPath) || strings.HasPrefix(m.MountPath, serviceAccountDir),
			"volume %s at %s hides the ServiceAccount token", m.Name, m.MountPath)
	}

	// RBAC: multi-tenant, reads and watches everything and writes as the
	// projects' ServiceAccounts, which it must impersonate; single-tenant,
	// every verb an applier uses, on everything. Bound to the worker.
	role := convert[rbacv1.ClusterRole](t, r.find("ClusterRole", "ferry-region"))
	impersonate := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, Verbs: []string{"impersonate"}}
	if singleTenant {
		assert.Contains(t, role.Rules, impersonate)
		assert.Contains(t, role.Rules, rbacv1.PolicyRule{APIGroups: []string{"*"}, Resources: []string{"*"},
			Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}})
		assert.Equal(t, "false", env["FERRY_REQUIRE_IMPERSONATION"])
	} else {
		assert.Equal(t, "true", env["FERRY_REQUIRE_IMPERSONATION"], "a project without ServiceAccounts fails clearly")
		for _, rule := range role.Rules {
			if len(rule.NonResourceURLs) > 0 {
				assert.Equal(t, []string{"get"}, rule.Verbs, "discovery")
				continue
			}
			assert.Subset(t, []string{"get", "list", "watch"}, rule.Verbs, "the multi-tenant worker only reads, as itself, and impersonates nobody cluster-wide: %+v", rule)
		}
		// Impersonation is granted per tenant namespace, and the worker
		// is told the same namespaces.
		imp := convert[rbacv1.ClusterRole](t, r.find("ClusterRole", "ferry-region-impersonate"))
		assert.Equal(t, []rbacv1.PolicyRule{impersonate}, imp.Rules)
		rb := convert[rbacv1.RoleBinding](t, r.find("RoleBinding", "ferry-region-impersonate"))
		assert.Equal(t, tenantNamespace, rb.Namespace)
		assert.Equal(t, rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "ferry-region-impersonate"}, rb.RoleRef)
		assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "ferry-region", Namespace: namespace}}, rb.Subjects)
		assert.Equal(t, "team-a", env["FERRY_IMPERSONATION_NAMESPACES"])
	}
	binding := convert[rbacv1.ClusterRoleBinding](t, r.find("ClusterRoleBinding", "ferry-region"))
	assert.Equal(t, rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "ferry-region"}, binding.RoleRef)
	assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "ferry-region", Namespace: namespace}}, binding.Subjects)
	return d, c, env
}

// checkTLS: with the component, FERRY_TEMPORAL_TLS_* name files of the
// ferry-temporal-tls Secret's mount; without it, none is set.
func checkTLS(t *testing.T, tls bool, d *appsv1.Deployment, c corev1.Container, env map[string]string) {
	t.Helper()
	keys := []string{"FERRY_TEMPORAL_TLS_CERT", "FERRY_TEMPORAL_TLS_KEY", "FERRY_TEMPORAL_TLS_CA", "FERRY_TEMPORAL_TLS_SERVER_NAME"}
	if !tls {
		for _, k := range keys {
			assert.NotContains(t, env, k)
		}
		return
	}
	for _, k := range keys {
		assert.Contains(t, env, k)
	}
	assert.Equal(t, tlsDir+"/tls.crt", env["FERRY_TEMPORAL_TLS_CERT"])
	assert.Equal(t, tlsDir+"/tls.key", env["FERRY_TEMPORAL_TLS_KEY"])
	assert.Equal(t, tlsDir+"/ca.crt", env["FERRY_TEMPORAL_TLS_CA"])
	v := volumeAt(t, d, c, tlsDir)
	require.NotNil(t, v.Secret)
	assert.Equal(t, "ferry-temporal-tls", v.Secret.SecretName)
	for _, m := range c.VolumeMounts {
		if m.MountPath == tlsDir {
			assert.True(t, m.ReadOnly)
		}
	}
	// The component adds to the Deployment; what the overlay set stays.
	assert.Contains(t, env, "FERRY_TEMPORAL_ADDRESS")
	assert.Contains(t, env, "GOMEMLIMIT")
}

// configMapName is the generated (hash-suffixed) name of a ConfigMap.
func configMapName(t *testing.T, r rendered, prefix string) string {
	t.Helper()
	for _, o := range r.objs {
		if o.GetKind() == "ConfigMap" && strings.HasPrefix(o.GetName(), prefix+"-") &&
			!strings.Contains(strings.TrimPrefix(o.GetName(), prefix+"-"), "-") {
			return o.GetName()
		}
	}
	t.Fatalf("no generated ConfigMap %s-<hash>", prefix)
	return ""
}

// envValues is env as name=value, valueFrom as its field path or resource.
func envValues(env []corev1.EnvVar) []string {
	var out []string
	for _, e := range env {
		v := e.Value
		if f := e.ValueFrom; f != nil && f.ResourceFieldRef != nil {
			v = "<" + f.ResourceFieldRef.Resource + ">"
		}
		out = append(out, e.Name+"="+v)
	}
	return out
}

// warnings collects the warnings the API server sends (Pod Security
// admission warns about a Deployment whose pods it would refuse).
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.list
	w.list = nil
	return out
}

// cluster is the stack's region as its admin.
type cluster struct {
	cfg    *rest.Config
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
	warn   *warnings
}

func connect(t *testing.T, cfg *rest.Config) *cluster {
	t.Helper()
	cfg = rest.CopyConfig(cfg)
	w := &warnings{}
	cfg.WarningHandler = w
	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	require.NoError(t, err)
	return &cluster{cfg: cfg, dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)), warn: w}
}

func adminConfig(t *testing.T) *rest.Config {
	t.Helper()
	if stack == nil {
		t.Skip("-short: no API server")
	}
	cfg, err := kube.LoadConfig(stack.Kubeconfig, region)
	require.NoError(t, err)
	return cfg
}

// apply server-side applies obj, as a dry run or for real.
func (c *cluster) apply(ctx context.Context, obj *unstructured.Unstructured, dryRun bool) (*unstructured.Unstructured, error) {
	gvk := obj.GroupVersionKind()
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", gvk, err)
	}
	var ri dynamic.ResourceInterface = c.dyn.Resource(m.Resource)
	if m.Scope.Name() == "namespace" {
		if obj.GetNamespace() == "" {
			return nil, fmt.Errorf("%s %s is namespaced but has no namespace", gvk.Kind, obj.GetName())
		}
		ri = c.dyn.Resource(m.Resource).Namespace(obj.GetNamespace())
	} else if obj.GetNamespace() != "" {
		return nil, fmt.Errorf("%s %s is cluster-scoped but has namespace %s", gvk.Kind, obj.GetName(), obj.GetNamespace())
	}
	opts := metav1.ApplyOptions{FieldManager: fieldManager, Force: true}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	return ri.Apply(ctx, obj.GetName(), obj, opts)
}

// TestServerSideDryRun has the API server accept every object of every
// variant: schema, defaults, validation and admission (Pod Security
// "restricted" among them), with nothing stored but the Namespace.
func TestServerSideDryRun(t *testing.T) {
	c := connect(t, adminConfig(t))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			r := rendered{t: t, objs: render(t, v)}
			// Namespaced dry runs need the Namespace: create it for real,
			// and Argo CD's and the example tenant's, which their owners
			// set up.
			ns := r.find("Namespace", namespace)
			_, err := c.apply(ctx, ns, false)
			require.NoError(t, err, "create Namespace %s", namespace)
			if v.argocd {
				createArgoCDNamespace(t, ctx, c)
			}
			if v.role == "region" {
				createNamespace(t, ctx, c, tenantNamespace)
			}
			if v.argocd {
				createArgoCDNamespace(t, ctx, c)
			}
			c.warn.take()

			for _, obj := range r.objs {
				what := obj.GetKind() + " " + obj.GetName()
				out, err := c.apply(ctx, obj, true)
				require.NoError(t, err, "%s: refused by the API server", what)
				assert.Equal(t, obj.GetName(), out.GetName(), what)
				assert.Equal(t, obj.GetKind(), out.GetKind(), what)
				assert.Empty(t, c.warn.take(), "%s: the API server warned", what)
				if obj.GetKind() == "Deployment" {
					// Defaults filled in, the containers as rendered.
					want, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
					got, _, _ := unstructured.NestedSlice(out.Object, "spec", "template", "spec", "containers")
					require.Len(t, got, len(want))
					for _, f := range []string{"command", "args", "envFrom", "image"} {
						assert.Equal(t, want[0].(map[string]any)[f], got[0].(map[string]any)[f], "%s: %s", what, f)
					}
					wantC := convert[corev1.Container](t, &unstructured.Unstructured{Object: want[0].(map[string]any)})
					gotC := convert[corev1.Container](t, &unstructured.Unstructured{Object: got[0].(map[string]any)})
					assert.Equal(t, envValues(wantC.Env), envValues(gotC.Env), "%s: env", what)
				}
			}
			// A dry run stores nothing: the Deployment is not there.
			d := r.find("Deployment", "ferry-"+v.role)
			_, err = c.dyn.Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}).
				Namespace(namespace).Get(ctx, d.GetName(), metav1.GetOptions{})
			assert.True(t, apierrors.IsNotFound(err), "the dry run created Deployment %s (get: %v)", d.GetName(), err)
		})
	}
}
