package hooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/health"
)

func fixture(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name+".yaml"))
	require.NoError(t, err)
	obj := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal(data, &obj.Object))
	return obj
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		fixture  string
		hook     bool
		phases   []app.HookType
		wave     int
		policies []DeletePolicy
		err      string
	}{
		{"argo-presync-job", true, []app.HookType{app.HookTypePreSync}, 0, []DeletePolicy{HookSucceeded}, ""},
		{"argo-multi-phase", true, []app.HookType{app.HookTypePostSync, app.HookTypeSyncFail}, -2, []DeletePolicy{HookSucceeded, HookFailed}, ""},
		{"argo-skip", true, nil, 0, []DeletePolicy{BeforeHookCreation}, ""},
		{"argo-postdelete", true, []app.HookType{app.HookTypePostDelete}, 0, []DeletePolicy{BeforeHookCreation}, ""},
		{"argo-typo", true, nil, 0, nil, `unknown phase "Presync"`},
		{"argo-bad-policy", true, nil, 0, nil, `unknown policy "OnSuccess"`},
		{"argo-bad-wave", true, nil, 0, nil, `"first" is not an integer`},
		{"helm-pre-install", true, []app.HookType{app.HookTypePreSync}, -2, []DeletePolicy{BeforeHookCreation, HookSucceeded}, ""},
		{"helm-post-delete", true, []app.HookType{app.HookTypePostDelete}, 0, []DeletePolicy{HookFailed}, ""},
		{"helm-test", true, nil, 0, []DeletePolicy{BeforeHookCreation}, ""},
		// Argo CD's phase and wave win over Helm's; Helm's policy applies
		// when Argo CD's annotation names none.
		{"helm-and-argo", true, []app.HookType{app.HookTypeSync}, 3, []DeletePolicy{HookFailed}, ""},
		{"plain-deployment", false, nil, 0, nil, ""},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			h, ok, err := Parse(fixture(t, tc.fixture))
			assert.Equal(t, tc.hook, ok)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.phases, h.Phases)
			assert.Equal(t, tc.wave, h.Wave)
			assert.Equal(t, tc.policies, h.Policies)
		})
	}
}

func TestCount(t *testing.T) {
	var objs []*unstructured.Unstructured
	for _, f := range []string{"argo-presync-job", "argo-multi-phase", "argo-skip", "argo-postdelete",
		"helm-pre-install", "helm-post-delete", "helm-test", "plain-deployment"} {
		objs = append(objs, fixture(t, f))
	}
	got, err := Count(objs)
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"PreSync": 2, "PostSync": 1, "SyncFail": 1, "PostDelete": 2}, got)

	none, err := Count([]*unstructured.Unstructured{fixture(t, "plain-deployment")})
	require.NoError(t, err)
	assert.Nil(t, none, "an app without hooks counts nothing")

	_, err = Count(append(objs, fixture(t, "argo-typo")))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Job/typo: annotation argocd.argoproj.io/hook")
}

func TestName(t *testing.T) {
	named := fixture(t, "argo-presync-job")
	assert.Equal(t, "migrate", Name(named, "1-aaaa", app.HookTypePreSync), "a named hook keeps its name")

	gen := fixture(t, "helm-pre-install")
	a := Name(gen, "1-aaaa", app.HookTypePreSync)
	assert.True(t, strings.HasPrefix(a, "upgrade-sql-schema"), a)
	assert.Len(t, a, len("upgrade-sql-schema")+suffixLength)
	assert.Equal(t, a, Name(gen, "1-aaaa", app.HookTypePreSync), "the same run, the same name")
	assert.NotEqual(t, a, Name(gen, "2-aaaa", app.HookTypePreSync), "another operation, another name")
	assert.NotEqual(t, a, Name(gen, "1-bbbb", app.HookTypePreSync), "the same number in a recreated app, another name")
	assert.NotEqual(t, a, Name(gen, "1-aaaa", app.HookTypePostSync), "another phase, another name")

	long := gen.DeepCopy()
	long.SetGenerateName(strings.Repeat("x", 80))
	assert.Len(t, Name(long, "1-aaaa", app.HookTypePreSync), maxNameLength)
}

func TestInstance(t *testing.T) {
	h, _, err := Parse(fixture(t, "helm-pre-install"))
	require.NoError(t, err)
	obj := instance(h, "shop", "prod", "4-12345678", app.HookTypePreSync)
	assert.Equal(t, Name(h.Object, "4-12345678", app.HookTypePreSync), obj.GetName())
	assert.Empty(t, obj.GetGenerateName())
	assert.Equal(t, "prod", obj.GetNamespace())
	assert.Equal(t, "shop", obj.GetLabels()["ferry.dev/app"])
	assert.Equal(t, "shop:batch/Job:prod/"+obj.GetName(), obj.GetAnnotations()["ferry.dev/tracking-id"])
	assert.Equal(t, "4-12345678/PreSync", obj.GetAnnotations()[AnnotationOperation])
	assert.Empty(t, h.Object.GetNamespace(), "the rendered object is not modified")
}

func TestState(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		want    Status
		msg     string
	}{
		{"live-job-complete", Succeeded, "completed"},
		{"live-job-failed", Failed, "BackoffLimitExceeded: Job has reached the specified backoff limit"},
		{"live-job-running", Running, "running"},
		{"live-job-deleting", Failed, "deleted while it ran"},
		{"live-pod-failed", Failed, `pod migrate-x7k2p: container "migrate" exited with code 3 (Error): schema v7 is newer than this binary`},
		{"live-pod-evicted", Failed, "pod notify: Evicted: The node was low on resource."},
		{"live-pod-running", Running, "pod is running"},
		{"live-pod-succeeded", Succeeded, "succeeded"},
		{"live-pod-image-pull", Failed, "ImagePullBackOff"},
		{"live-deployment-progressing", Running, "available"},
		{"live-configmap", Succeeded, ""},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			got, msg := state(fixture(t, tc.fixture), health.Checker{})
			assert.Equal(t, tc.want, got, "message %q", msg)
			assert.Contains(t, msg, tc.msg)
		})
	}
}

func TestTimeoutOf(t *testing.T) {
	assert.Equal(t, 10*time.Minute+deadlineGrace, timeoutOf(fixture(t, "live-job-complete"), time.Hour))
	assert.Equal(t, time.Minute+deadlineGrace, timeoutOf(fixture(t, "live-pod-failed"), time.Hour))
	assert.Equal(t, time.Hour, timeoutOf(fixture(t, "live-job-failed"), time.Hour), "no deadline: the default")
	assert.Equal(t, time.Hour, timeoutOf(fixture(t, "live-deployment-progressing"), time.Hour))
}
