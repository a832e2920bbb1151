package appobjects

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/internal/app"
)

// guestbook is an Application object as the API server returns it.
const guestbook = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: guestbook
  namespace: argocd
  uid: 0b8e7a52-8d1c-4d0e-9b7e-3f7d1f0a2c11
  resourceVersion: "4711"
  generation: 3
  creationTimestamp: "2026-12-04T10:00:00Z"
  managedFields: [{manager: kubectl, operation: Apply}]
  annotations:
    argocd.argoproj.io/refresh: hard
    team: web
  finalizers: [resources-finalizer.argocd.argoproj.io]
spec:
  project: default
  source: {repoURL: "https://git.example/guestbook.git", targetRevision: HEAD, path: guestbook}
  destination: {server: "https://kubernetes.default.svc", namespace: default}
operation:
  sync: {prune: true}
status:
  sync: {status: Synced}
`

func object(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(doc), &u.Object))
	return u
}

func TestReadTakesTheAppOfAnObject(t *testing.T) {
	a, err := Read(object(t, guestbook), app.ValidateOptions{})
	require.NoError(t, err, "the server's metadata, operation and status are not the app's")
	require.Equal(t, "guestbook", a.Metadata.Name)
	require.Equal(t, map[string]string{"team": "web"}, a.Metadata.Annotations, "the refresh annotation is not the app's")
	require.Equal(t, app.PropagationForeground, a.DeletePropagation())
	require.Equal(t, "guestbook", a.Spec.Source.Path)
}

func TestReadNamesEveryProblem(t *testing.T) {
	u := object(t, guestbook)
	require.NoError(t, unstructured.SetNestedField(u.Object, "x", "spec", "sourcee"))
	require.NoError(t, unstructured.SetNestedField(u.Object, "3 minutes", "spec", "syncPolicy", "retry", "backoff", "duration"))
	_, err := Read(u, app.ValidateOptions{})
	var ve *app.ValidationError
	require.ErrorAs(t, err, &ve)
	msg := invalidMessage(err)
	require.Contains(t, msg, "spec.sourcee")
	require.Contains(t, msg, "spec.syncPolicy.retry.backoff.duration")
}

func TestSpecDigestIgnoresWhatIsNotTheApps(t *testing.T) {
	u := object(t, guestbook)
	before := specDigest(u)
	v := u.DeepCopy()
	require.NoError(t, unstructured.SetNestedField(v.Object, "OutOfSync", "status", "sync", "status"))
	unstructured.RemoveNestedField(v.Object, "operation")
	v.SetResourceVersion("4712")
	v.SetAnnotations(map[string]string{"team": "web"})
	require.Equal(t, before, specDigest(v), "status, operation, resourceVersion and the refresh annotation")
	require.NoError(t, unstructured.SetNestedField(v.Object, "main", "spec", "source", "targetRevision"))
	require.NotEqual(t, before, specDigest(v), "the spec")
	w := u.DeepCopy()
	w.SetLabels(map[string]string{"tier": "web"})
	require.NotEqual(t, before, specDigest(w), "the labels")
}

func TestReadOperation(t *testing.T) {
	op, err := ReadOperation(map[string]any{"sync": map[string]any{
		"revisions": []any{"v2"}, "prune": true, "syncStrategy": map[string]any{"hook": map[string]any{"force": true}},
		"syncOptions": []any{"ApplyOutOfSyncOnly=true"}, "resources": []any{map[string]any{"kind": "Service", "name": "web"}},
	}, "initiatedBy": map[string]any{"username": "admin"}, "info": []any{map[string]any{"name": "reason", "value": "hotfix"}}})
	require.NoError(t, err)
	require.Equal(t, "v2", op.Sync.Revision)
	require.True(t, op.Sync.Prune)
	require.True(t, op.Sync.SyncStrategy.Force())
	require.True(t, op.Sync.ApplyOutOfSyncOnly())
	require.Equal(t, []app.SyncResource{{Kind: "Service", Name: "web"}}, op.Sync.Resources)
	require.Equal(t, []app.Info{{Name: "reason", Value: "hotfix"}}, op.Info)
	require.Equal(t, &app.InitiatedBy{Username: "admin"}, op.InitiatedBy, "the operation keeps who set it")

	none, err := ReadOperation(nil)
	require.NoError(t, err)
	require.Nil(t, none)

	_, err = ReadOperation(map[string]any{"sync": map[string]any{"manifests": []any{"kind: ConfigMap"}}})
	require.ErrorContains(t, err, "operation.sync.manifests (argocd app sync --local) is not taken from an Application object")
	require.ErrorContains(t, err, "ferry app sync NAME --local DIR", "it says what to do instead")
	_, err = ReadOperation(map[string]any{"initiatedBy": map[string]any{"username": "admin"}})
	require.ErrorContains(t, err, "set operation.sync")
	_, err = ReadOperation(map[string]any{"sync": map[string]any{}, "initiatedBy": map[string]any{"user": "admin"}})
	require.ErrorContains(t, err, `unknown field "user"`, "initiatedBy takes Argo CD's username and automated")
	_, err = ReadOperation(map[string]any{"sync": map[string]any{"revisions": []any{"a", "b"}}})
	require.ErrorContains(t, err, "operation.sync.revisions")
}

type schemaGVR = schema.GroupVersionResource

func toObjects(us []*unstructured.Unstructured) []runtime.Object {
	out := make([]runtime.Object, len(us))
	for i, u := range us {
		out[i] = u
	}
	return out
}
