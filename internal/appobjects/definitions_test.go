package appobjects

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
)

// fakeDefinitions records what the mirror asks.
type fakeDefinitions struct {
	applied, deleted []string
	refuse           error
}

func (f *fakeDefinitions) Apply(_ context.Context, kind string, doc []byte) error {
	f.applied = append(f.applied, kind+" "+string(doc))
	if f.refuse != nil {
		return &Refused{Err: f.refuse}
	}
	return nil
}

func (f *fakeDefinitions) Delete(_ context.Context, kind, name string) error {
	f.deleted = append(f.deleted, kind+" "+name)
	if f.refuse != nil {
		return &Refused{Err: f.refuse}
	}
	return nil
}

const project = `apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata:
  name: team-a
  namespace: argocd
  resourceVersion: "7"
spec:
  sourceRepos: ['*']
`

// TestDefinitionsMirrorTheirObjects: an AppProject object is applied once
// per version of its spec, without what the API server writes; a refused
// one is not tried again until it changes; a deleted one is deleted, and
// tried again while that is refused.
func TestDefinitionsMirrorTheirObjects(t *testing.T) {
	defs := &fakeDefinitions{}
	m := &definitionMirror{definitionKind: definitionKinds[0], applied: map[string]string{},
		c: &Controller{Namespace: "argocd", Definitions: defs}, indexer: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})}
	ctx := context.Background()
	u := object(t, project)
	require.NoError(t, m.indexer.Add(u))
	for range 2 {
		again, err := m.reconcile(ctx, "argocd/team-a")
		require.NoError(t, err)
		require.Zero(t, again)
	}
	require.Len(t, defs.applied, 1, "an unchanged object is applied once")
	require.Contains(t, defs.applied[0], `"name":"team-a"`)
	require.NotContains(t, defs.applied[0], "resourceVersion", "what the API server writes is not the project's")

	defs.refuse = errors.New("spec.sourceRepos: invalid")
	changed := u.DeepCopy()
	require.NoError(t, unstructured.SetNestedStringSlice(changed.Object, []string{"["}, "spec", "sourceRepos"))
	require.NoError(t, m.indexer.Update(changed))
	for range 2 {
		_, err := m.reconcile(ctx, "argocd/team-a")
		require.NoError(t, err, "a refusal is said, not retried")
	}
	require.Len(t, defs.applied, 2, "a refused version is not tried again")

	require.NoError(t, m.indexer.Delete(changed))
	again, err := m.reconcile(ctx, "argocd/team-a")
	require.NoError(t, err)
	require.Equal(t, refusedAgain, again, "a refused delete (apps use the project) is tried again")
	defs.refuse = nil
	again, err = m.reconcile(ctx, "argocd/team-a")
	require.NoError(t, err)
	require.Zero(t, again)
	require.Equal(t, []string{"AppProject team-a", "AppProject team-a"}, defs.deleted)
}
