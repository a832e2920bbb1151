package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/ferry-gitops/ferry/e2e/e2etest"
	"github.com/ferry-gitops/ferry/internal/devenv"
)

// liveApp is what the live-state test deploys: a Deployment of two pods
// of two containers, a ConfigMap and a Secret.
var liveApp = map[string]string{
	"app/web.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: nginx, image: nginx:1.27}
      - {name: sidecar, image: busybox:1.36}
`,
	"app/cm.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {color: blue}\n",
	"app/secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData: {password: hunter2}\n",
}

// node is the part of Argo CD's ResourceNode the test reads.
type node struct {
	Group, Kind, Name, Namespace, UID, Region string
	ParentRefs                                []struct{ Kind, Name, UID string }
	Info                                      []struct{ Name, Value string }
	Images                                    []string
	Health                                    *struct{ Status string }
}

// TestLiveStateAPIs: the REST paths that read an app's regions, driven as
// a curl script drives Argo CD's: the resource tree, the managed resources
// (live against Git, Secrets masked), the manifests, a resource's events,
// the pods' logs and resource actions, each as the policy allows.
func TestLiveStateAPIs(t *testing.T) {
	e := newEnv(t)
	e.StartWorker(t, e.AllRoles()...)
	kubectl(t, `apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm, namespace: argocd}
data:
  accounts.viewer: login
  accounts.auditor: login
  resource.customizations.actions.ConfigMap: |
    definitions:
    - name: touch
      action.lua: |
        obj.data.touched = "yes"
        return obj
`, "apply", "-f", "-")
	kubectl(t, `apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-rbac-cm, namespace: argocd}
data:
  policy.csv: |
    p, viewer, applications, get, live/*, allow
    p, viewer, logs, get, live/*, allow
    p, auditor, applications, get, live/*, allow
`, "apply", "-f", "-")
	s := e.StartServer(t)
	admin := s.Login(t, "admin", adminPassword(t))
	for _, who := range []string{"viewer", "auditor"} {
		s.MustDo(t, admin, "PUT", "/api/v1/account/password",
			map[string]string{"name": who, "currentPassword": adminPassword(t), "newPassword": who + "-password"}, http.StatusOK, nil)
	}
	viewer, auditor := s.Login(t, "viewer", "viewer-password"), s.Login(t, "auditor", "auditor-password")

	_, sha := s.DeployTeamApp(t, e, admin, "live", liveApp)
	region := regions[0]

	t.Run("resource-tree", func(t *testing.T) {
		var tree struct{ Nodes []node }
		e2etest.Eventually(t, time.Minute, "the tree holds the Deployment's two pods", func() (bool, string) {
			s.MustDo(t, viewer, "GET", "/api/v1/applications/live/resource-tree", nil, http.StatusOK, &tree)
			return len(byKind(tree.Nodes, "Pod")) == 2, fmt.Sprintf("%+v", tree.Nodes)
		})
		deploy, rs := byKind(tree.Nodes, "Deployment"), byKind(tree.Nodes, "ReplicaSet")
		require.Len(t, deploy, 1)
		require.Len(t, rs, 1)
		assert.Equal(t, "Healthy", deploy[0].Health.Status)
		require.Len(t, rs[0].ParentRefs, 1)
		assert.Equal(t, deploy[0].UID, rs[0].ParentRefs[0].UID, "the ReplicaSet's parent is the Deployment")
		for _, p := range byKind(tree.Nodes, "Pod") {
			require.Len(t, p.ParentRefs, 1)
			assert.Equal(t, rs[0].UID, p.ParentRefs[0].UID, "a pod's parent is the ReplicaSet")
			assert.ElementsMatch(t, []string{"nginx:1.27", "busybox:1.36"}, p.Images)
			assert.Contains(t, p.Info, struct{ Name, Value string }{"Containers", "2/2"})
		}
		for _, n := range tree.Nodes {
			assert.Equal(t, region, n.Region, n.Name)
		}
		assert.Len(t, byKind(tree.Nodes, "ConfigMap"), 1)
		assert.Len(t, byKind(tree.Nodes, "Secret"), 1)
	})

	t.Run("manifests", func(t *testing.T) {
		var m struct {
			Manifests []string
			Revision  string
		}
		s.MustDo(t, viewer, "GET", "/api/v1/applications/live/manifests", nil, http.StatusOK, &m)
		assert.Equal(t, sha, m.Revision)
		require.Len(t, m.Manifests, 3)
		all := strings.Join(m.Manifests, "\n")
		assert.Contains(t, all, `"color":"blue"`)
		assert.NotContains(t, all, "hunter2")
		assert.Contains(t, all, `"password":"++++++++"`)
		status, body := s.Do(t, viewer, "GET", "/api/v1/applications/live/manifests?revision=0123456789abcdef0123456789abcdef01234567", nil)
		assert.Equal(t, http.StatusBadRequest, status, body)
		assert.Contains(t, body, "ferry app manifests live --revision")
	})

	t.Run("managed-resources", func(t *testing.T) {
		// Someone changes the ConfigMap in the region: live and Git differ.
		settings := regionObject(t, region, schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "live", "settings")
		require.NoError(t, unstructured.SetNestedField(settings.obj.Object, "red", "data", "color"))
		_, err := settings.client.Update(context.Background(), settings.obj, metav1.UpdateOptions{})
		require.NoError(t, err)

		var res struct {
			Items []struct {
				Kind, Name, Region                                              string
				TargetState, LiveState, NormalizedLiveState, PredictedLiveState string
				Modified                                                        bool
			}
		}
		s.MustDo(t, viewer, "GET", "/api/v1/applications/live/managed-resources", nil, http.StatusOK, &res)
		require.Len(t, res.Items, 3)
		raw, err := json.Marshal(res)
		require.NoError(t, err)
		for _, secret := range []string{"hunter2", "aHVudGVyMg"} {
			assert.NotContains(t, string(raw), secret)
		}
		for _, it := range res.Items {
			assert.Equal(t, region, it.Region)
			switch it.Kind {
			case "ConfigMap":
				assert.True(t, it.Modified, "changed in the region")
				assert.Contains(t, it.TargetState, `"color":"blue"`)
				assert.Contains(t, it.LiveState, `"color":"red"`)
				assert.Contains(t, it.PredictedLiveState, `"color":"blue"`)
			case "Deployment":
				assert.False(t, it.Modified, it.NormalizedLiveState)
				assert.Contains(t, it.LiveState, `"readyReplicas":2`)
			case "Secret":
				assert.Contains(t, it.LiveState, `"password":"++++++++"`)
			}
		}
		var narrowed struct{ Items []struct{ Kind string } }
		s.MustDo(t, viewer, "GET", "/api/v1/applications/live/managed-resources?kind=Secret", nil, http.StatusOK, &narrowed)
		assert.Len(t, narrowed.Items, 1)
	})

	t.Run("events", func(t *testing.T) {
		e2etest.Eventually(t, time.Minute, "the Deployment's events", func() (bool, string) {
			var evs struct {
				Items []struct {
					Reason         string
					InvolvedObject struct{ Kind, Name string }
				}
			}
			status, body := s.Do(t, viewer, "GET", "/api/v1/applications/live/events?resourceName=web&resourceNamespace=live", nil)
			if status != http.StatusOK || json.Unmarshal([]byte(body), &evs) != nil {
				return false, body
			}
			for _, ev := range evs.Items {
				if ev.InvolvedObject.Kind != "Deployment" || ev.InvolvedObject.Name != "web" {
					return false, "another object's event: " + body
				}
			}
			return len(evs.Items) > 0 && evs.Items[0].Reason == "ScalingReplicaSet", body
		})
		status, body := s.Do(t, viewer, "GET", "/api/v1/applications/live/events?resourceName=nothing&resourceNamespace=live", nil)
		assert.Equal(t, http.StatusNotFound, status, body)
	})

	t.Run("logs", func(t *testing.T) {
		status, body := s.Do(t, viewer, "GET", "/api/v1/applications/live/logs?group=apps&kind=Deployment&resourceName=web&container=nginx", nil)
		require.Equal(t, http.StatusOK, status, body)
		lines := strings.Split(strings.TrimSpace(body), "\n")
		require.Len(t, lines, 3, "one line of each pod's nginx, then the last entry:\n%s", body)
		for i, l := range lines {
			var entry struct {
				Result struct {
					Content, PodName, Namespace, Region string
					Last                                bool
				}
			}
			require.NoError(t, json.Unmarshal([]byte(l), &entry), l)
			if i == len(lines)-1 {
				assert.True(t, entry.Result.Last, l)
				continue
			}
			assert.Equal(t, devenv.FakeLogLine, entry.Result.Content)
			assert.True(t, strings.HasPrefix(entry.Result.PodName, "web-"), l)
			assert.Equal(t, region, entry.Result.Region)
			assert.Equal(t, "live", entry.Result.Namespace)
		}
		status, body = s.Do(t, auditor, "GET", "/api/v1/applications/live/logs", nil)
		assert.Equal(t, http.StatusForbidden, status, body)
		assert.Contains(t, body, "get logs live/live")
		status, body = s.Do(t, viewer, "GET", "/api/v1/applications/live/logs?tailLines=many", nil)
		assert.Equal(t, http.StatusBadRequest, status, body)
	})

	t.Run("actions", func(t *testing.T) {
		var acts struct{ Actions []struct{ Name string } }
		s.MustDo(t, viewer, "GET", "/api/v1/applications/live/resource/actions?namespace=live&resourceName=web&kind=Deployment&group=apps", nil, http.StatusOK, &acts)
		assert.Equal(t, "restart", acts.Actions[0].Name)
		s.MustDo(t, viewer, "GET", "/api/v1/applications/live/resource/actions?namespace=live&resourceName=settings&kind=ConfigMap", nil, http.StatusOK, &acts)
		require.Len(t, acts.Actions, 1)
		assert.Equal(t, "touch", acts.Actions[0].Name)

		restart := "/api/v1/applications/live/resource/actions?namespace=live&resourceName=web&kind=Deployment&group=apps"
		status, body := s.Do(t, viewer, "POST", restart, "restart")
		assert.Equal(t, http.StatusForbidden, status, body)
		assert.Contains(t, body, "action/apps/Deployment/restart")
		var ran struct {
			Results []struct {
				Region, Kind, Name string
				Done               []string
			}
		}
		s.MustDo(t, admin, "POST", restart, "restart", http.StatusOK, &ran)
		require.Len(t, ran.Results, 1)
		assert.Equal(t, region, ran.Results[0].Region)
		assert.Equal(t, "web", ran.Results[0].Name)
		assert.Contains(t, strings.Join(ran.Results[0].Done, ","), "restarted")
		web := regionObject(t, region, schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "live", "web")
		at, _, _ := unstructured.NestedString(web.obj.Object, "spec", "template", "metadata", "annotations", "kubectl.kubernetes.io/restartedAt")
		assert.NotEmpty(t, at, "the restart set the pod template's restartedAt")

		s.MustDo(t, admin, "POST", "/api/v1/applications/live/resource/actions/v2",
			map[string]any{"action": "touch", "kind": "ConfigMap", "resourceName": "settings", "namespace": "live"}, http.StatusOK, nil)
		settings := regionObject(t, region, schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "live", "settings")
		touched, _, _ := unstructured.NestedString(settings.obj.Object, "data", "touched")
		assert.Equal(t, "yes", touched)

		status, body = s.Do(t, admin, "POST", "/api/v1/applications/live/resource/actions?namespace=live&resourceName=nothing&kind=ConfigMap", "touch")
		assert.Equal(t, http.StatusNotFound, status, body)
		var denied, allowed bool
		for _, a := range s.AuditLog(t) {
			denied = denied || (a.User == "viewer" && a.Action == "action/apps/Deployment/restart" && !a.Allowed)
			allowed = allowed || (a.User == "admin" && a.Action == "action//ConfigMap/touch" && a.Allowed)
		}
		assert.True(t, denied, "the audit log has the viewer's denied restart")
		assert.True(t, allowed, "the audit log has the admin's touch")
	})
}

func byKind(nodes []node, kind string) []node {
	var out []node
	for _, n := range nodes {
		if n.Kind == kind {
			out = append(out, n)
		}
	}
	return out
}

// regionObj is an object read from a region, with its client.
type regionObj struct {
	obj    *unstructured.Unstructured
	client dynamic.ResourceInterface
}

func regionObject(t *testing.T, region string, gvr schema.GroupVersionResource, ns, name string) regionObj {
	t.Helper()
	cfg, err := stack.RestConfig(region)
	require.NoError(t, err)
	dc, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	ri := dc.Resource(gvr).Namespace(ns)
	obj, err := ri.Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	return regionObj{obj: obj, client: ri}
}
