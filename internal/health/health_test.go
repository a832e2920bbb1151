package health

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/internal/app"
)

// assertHealth reads testdata/<fixture>.yaml and checks its health code and
// that the message contains wantMsg.
func assertHealth(t *testing.T, fixture string, want app.HealthStatusCode, wantMsg string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", fixture+".yaml"))
	require.NoError(t, err)
	obj := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal(data, &obj.Object))
	got, msg := Get(obj)
	assert.Equal(t, want, got, "health of %s (message %q)", fixture, msg)
	assert.Contains(t, msg, wantMsg, "message of %s", fixture)
}

func TestGet(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		want    app.HealthStatusCode
		msg     string
	}{
		{"deployment-healthy", app.HealthHealthy, ""},
		{"deployment-old-generation", app.HealthProgressing, "observe the latest spec"},
		{"deployment-paused", app.HealthSuspended, "paused"},
		{"deployment-deadline-exceeded", app.HealthDegraded, "progress deadline"},
		{"deployment-updating", app.HealthProgressing, "1 of 3 replicas updated"},
		{"deployment-old-replicas", app.HealthProgressing, "1 old replicas"},
		{"deployment-unavailable", app.HealthProgressing, "1 of 3 updated replicas available"},
		{"deployment-deleting", app.HealthProgressing, "pending deletion"},
		{"deployment-malformed", app.HealthUnknown, "Deployment/web"},

		{"job-running", app.HealthProgressing, "running"},
		{"job-suspended", app.HealthSuspended, "suspended"},
		{"job-complete", app.HealthHealthy, "completed"},
		{"job-failed", app.HealthDegraded, "BackoffLimitExceeded: Job has reached the specified backoff limit"},

		{"pod-ready", app.HealthHealthy, ""},
		{"pod-not-ready", app.HealthProgressing, "not ready"},
		{"pod-pending", app.HealthProgressing, "pending"},
		{"pod-crashloop", app.HealthDegraded, `container "web": CrashLoopBackOff`},
		{"pod-image-pull", app.HealthDegraded, "ImagePullBackOff"},
		{"pod-succeeded", app.HealthHealthy, "completed"},
		{"pod-failed", app.HealthDegraded, "Evicted: The node was low on resource."},
		{"pod-running-once", app.HealthProgressing, "running"},

		{"statefulset-healthy", app.HealthHealthy, ""},
		{"statefulset-not-ready", app.HealthProgressing, "1 of 3 replicas ready"},
		{"statefulset-updating", app.HealthProgressing, "1 of 3 replicas updated"},
		{"statefulset-partitioned", app.HealthHealthy, "partitioned rollout complete"},
		{"statefulset-on-delete", app.HealthHealthy, ""},

		{"daemonset-healthy", app.HealthHealthy, ""},
		{"daemonset-updating", app.HealthProgressing, "1 of 3 pods updated"},
		{"daemonset-unavailable", app.HealthProgressing, "2 of 3 pods available"},

		{"replicaset-healthy", app.HealthHealthy, ""},
		{"replicaset-progressing", app.HealthProgressing, "1 of 2 replicas available"},
		{"replicaset-quota", app.HealthDegraded, "exceeded quota"},

		{"service-clusterip", app.HealthHealthy, ""},
		{"service-lb-pending", app.HealthProgressing, "load balancer"},
		{"service-lb-ready", app.HealthHealthy, ""},

		{"pvc-bound", app.HealthHealthy, ""},
		{"pvc-pending", app.HealthProgressing, "bound"},
		{"pvc-lost", app.HealthDegraded, "lost"},

		{"configmap-any", app.HealthHealthy, ""},

		{"ingress-pending", app.HealthProgressing, "publish an address"},
		{"ingress-ready", app.HealthHealthy, ""},

		{"hpa-healthy", app.HealthHealthy, ""},
		{"hpa-no-metrics", app.HealthDegraded, "FailedGetResourceMetric: the HPA was unable to compute the replica count"},
		{"hpa-new", app.HealthProgressing, "waiting for the autoscaler"},
		{"hpa-v1-annotation", app.HealthDegraded, "cannot scale: FailedGetScale"},

		{"crd-established", app.HealthHealthy, ""},
		{"crd-pending", app.HealthProgressing, "establish"},
		{"crd-conflict", app.HealthDegraded, "ListKindConflict"},

		{"apiservice-available", app.HealthHealthy, ""},
		{"apiservice-unavailable", app.HealthProgressing, "MissingEndpoints"},

		{"namespace-active", app.HealthHealthy, ""},
		{"namespace-terminating", app.HealthProgressing, "terminating"},

		{"custom-ready", app.HealthHealthy, ""},
		{"custom-not-ready", app.HealthProgressing, "Issuing"},
		{"custom-stalled", app.HealthDegraded, "stalled: BuildFailed: kustomization path not found"},
		{"custom-old-generation", app.HealthProgressing, "observe the latest spec"},
		{"custom-no-status", app.HealthHealthy, ""},
	} {
		t.Run(tc.fixture, func(t *testing.T) { assertHealth(t, tc.fixture, tc.want, tc.msg) })
	}
}

func TestGetNil(t *testing.T) {
	code, _ := Get(nil)
	assert.Equal(t, app.HealthMissing, code)
}
