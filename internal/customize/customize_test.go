package customize

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/internal/app"
)

const certificateHealth = `
hs = {}
if obj.status ~= nil and obj.status.conditions ~= nil then
  for i, c in ipairs(obj.status.conditions) do
    if c.type == "Ready" and c.status == "False" then
      hs.status = "Degraded"
      hs.message = c.message
      return hs
    end
    if c.type == "Ready" and c.status == "True" then
      hs.status = "Healthy"
      hs.message = c.message
      return hs
    end
  end
end
hs.status = "Progressing"
hs.message = "Waiting for certificate"
return hs
`

func object(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(manifest), &u.Object))
	return u
}

func setOf(t *testing.T, data map[string]string) *Set {
	t.Helper()
	s, err := FromData(data)
	require.NoError(t, err)
	return s
}

func TestHealthScriptDecidesTheHealthOfItsKind(t *testing.T) {
	s := setOf(t, map[string]string{"resource.customizations.health.cert-manager.io_Certificate": certificateHealth})
	cert := object(t, `
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: web}
status:
  conditions:
  - {type: Ready, status: "False", message: "issuer letsencrypt not found"}
`)
	code, msg, ok := s.Health(cert)
	require.True(t, ok)
	assert.Equal(t, app.HealthDegraded, code)
	assert.Equal(t, "issuer letsencrypt not found", msg)

	delete(cert.Object, "status")
	code, msg, _ = s.Health(cert)
	assert.Equal(t, app.HealthProgressing, code)
	assert.Equal(t, "Waiting for certificate", msg)

	_, _, ok = s.Health(object(t, "{apiVersion: v1, kind: ConfigMap, metadata: {name: x}}"))
	assert.False(t, ok, "a kind no script covers keeps its built-in health")
}

func TestWildcardAndCoreKeys(t *testing.T) {
	s := setOf(t, map[string]string{
		"resource.customizations.health.*.crossplane.io_*": `return {status = "Suspended", message = "crossplane"}`,
		"resource.customizations.health.Service":           `return {status = "Healthy", message = "core"}`,
	})
	code, msg, ok := s.Health(object(t, "{apiVersion: ec2.aws.crossplane.io/v1beta1, kind: Instance, metadata: {name: i}}"))
	require.True(t, ok)
	assert.Equal(t, app.HealthSuspended, code)
	assert.Equal(t, "crossplane", msg)
	code, msg, ok = s.Health(object(t, "{apiVersion: v1, kind: Service, metadata: {name: s}}"))
	require.True(t, ok)
	assert.Equal(t, app.HealthHealthy, code)
	assert.Equal(t, "core", msg)
}

func TestLegacyKeyIsRead(t *testing.T) {
	s := setOf(t, map[string]string{"resource.customizations": "argoproj.io/Application:\n  health.lua: |\n    return {status = \"Progressing\", message = \"legacy\"}\n"})
	code, msg, ok := s.Health(object(t, "{apiVersion: argoproj.io/v1alpha1, kind: Application, metadata: {name: a}}"))
	require.True(t, ok)
	assert.Equal(t, app.HealthProgressing, code)
	assert.Equal(t, "legacy", msg)
}

func TestScriptsCannotReachFilesEnvironmentOrRunForever(t *testing.T) {
	probes := map[string]string{
		"getenv":   `return {status = "Healthy", message = tostring(os.getenv)}`,
		"io":       `return {status = "Healthy", message = tostring(io)}`,
		"dofile":   `return {status = "Healthy", message = tostring(dofile)}`,
		"require":  `return {status = "Healthy", message = tostring(require)}`,
		"execute":  `return {status = "Healthy", message = tostring(os.execute)}`,
		"loadfile": `return {status = "Healthy", message = tostring(loadfile)}`,
	}
	for name, script := range probes {
		t.Run(name, func(t *testing.T) {
			s := setOf(t, map[string]string{"resource.customizations.health.example.com_Probe": script})
			code, msg, ok := s.Health(object(t, "{apiVersion: example.com/v1, kind: Probe, metadata: {name: p}}"))
			require.True(t, ok)
			assert.Equal(t, app.HealthHealthy, code)
			assert.Equal(t, "nil", msg, "the script saw something it must not")
		})
	}
	t.Run("os.time works", func(t *testing.T) {
		s := setOf(t, map[string]string{"resource.customizations.health.example.com_Probe": `return {status = "Healthy", message = tostring(os.time() > 0)}`})
		_, msg, _ := s.Health(object(t, "{apiVersion: example.com/v1, kind: Probe, metadata: {name: p}}"))
		assert.Equal(t, "true", msg)
	})
	t.Run("loop", func(t *testing.T) {
		s := setOf(t, map[string]string{"resource.customizations.health.example.com_Probe": `while true do end`})
		code, msg, ok := s.Health(object(t, "{apiVersion: example.com/v1, kind: Probe, metadata: {name: p}}"))
		require.True(t, ok)
		assert.Equal(t, app.HealthUnknown, code)
		assert.Contains(t, msg, "ran longer than 1s")
		assert.Contains(t, msg, "example.com/Probe")
	})
}

func TestBadScriptResultsAreUnknownWithTheReason(t *testing.T) {
	s := setOf(t, map[string]string{
		"resource.customizations.health.example.com_A": `return {status = "Fine"}`,
		"resource.customizations.health.example.com_B": `return "Healthy"`,
		"resource.customizations.health.example.com_C": `error("no status yet")`,
	})
	for kind, want := range map[string]string{"A": `status "Fine"`, "B": "returned string", "C": "no status yet"} {
		code, msg, ok := s.Health(object(t, "{apiVersion: example.com/v1, kind: "+kind+", metadata: {name: x}}"))
		require.True(t, ok)
		assert.Equal(t, app.HealthUnknown, code, kind)
		assert.Contains(t, msg, want, kind)
	}
}

func TestParseNamesEveryProblemAtOnce(t *testing.T) {
	_, err := FromData(map[string]string{
		"resource.customizations.health.example.com_A":      `if then`,
		"resource.customizations.useOpenLibs.example.com_A": "true",
		"resource.customizations.colour.example.com_A":      "red",
		"resource.customizations.health.a_b_c":              "return {}",
		"resource.customizations.actions.apps_Deployment":   "definitions:\n- name: ''\n  action.lua: return obj\n",
		"resource.customizations.ignoreDifferences.all":     "jsonPointer: /x",
		"resource.exclusions":                               "- apiGroups: ['[']",
		"url":                                               "https://argocd.example.com",
	})
	require.Error(t, err)
	msg := err.Error()
	for _, want := range []string{
		`data["resource.customizations.health.example.com_A"]: Lua syntax`,
		`useOpenLibs.example.com_A"]: Ferry runs Lua scripts without the os and io`,
		`customization "colour" is not one Argo CD defines`,
		`"a_b_c" is not <group>_<kind>`,
		`definitions[0].name is empty`,
		`ignoreDifferences.all"]: not {jsonPointers`,
		`pattern "["`,
	} {
		assert.Contains(t, msg, want)
	}
	assert.NotContains(t, msg, "argocd.example.com", "keys that are Argo CD's own are not read")
}

func TestParseReadsTheConfigMapManifest(t *testing.T) {
	s, err := Parse([]byte(`
apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm, namespace: argocd}
data:
  resource.customizations.ignoreDifferences.apps_Deployment: |
    jsonPointers: [/spec/replicas]
  resource.customizations.ignoreDifferences.all: |
    managedFieldsManagers: [kube-controller-manager]
  resource.exclusions: |
    - apiGroups: ["cilium.io"]
      kinds: ["CiliumIdentity"]
      clusters: ["*"]
`))
	require.NoError(t, err)
	ids := s.IgnoreDifferences("apps", "Deployment")
	require.Len(t, ids, 2)
	assert.Equal(t, []string{"/spec/replicas"}, ids[0].JSONPointers)
	assert.Equal(t, "Deployment", ids[0].Kind)
	assert.Equal(t, []string{"kube-controller-manager"}, ids[1].ManagedFieldsManagers)
	assert.Len(t, s.IgnoreDifferences("", "Service"), 1, "the .all entry applies to every kind")
	assert.True(t, s.Excluded("cilium.io", "CiliumIdentity", "eu"))
	assert.False(t, s.Excluded("apps", "Deployment", "eu"))

	_, err = Parse([]byte("apiVersion: v1\nkind: Secret\nmetadata: {name: argocd-cm}\n"))
	require.ErrorContains(t, err, `kind is "Secret"`)
}

func TestInclusionsLeaveOutWhatTheyDoNotList(t *testing.T) {
	s := setOf(t, map[string]string{"resource.inclusions": "- apiGroups: ['', apps]\n  kinds: ['*']\n"})
	assert.False(t, s.Excluded("apps", "Deployment", "eu"))
	assert.True(t, s.Excluded("batch", "Job", "eu"))
	var none *Set
	assert.False(t, none.Excluded("batch", "Job", "eu"))
	_, _, ok := none.Health(object(t, "{apiVersion: v1, kind: Pod, metadata: {name: p}}"))
	assert.False(t, ok)
}

const restartActions = `
discovery.lua: |
  actions = {}
  actions["restart"] = {}
  actions["pause"] = {["disabled"] = obj.spec.paused == true}
  return actions
definitions:
- name: restart
  action.lua: |
    if obj.spec.template.metadata == nil then obj.spec.template.metadata = {} end
    if obj.spec.template.metadata.annotations == nil then obj.spec.template.metadata.annotations = {} end
    obj.spec.template.metadata.annotations["example.com/restartedAt"] = "now"
    return obj
- name: pause
  action.lua: |
    obj.spec.paused = true
    return obj
`

func TestActionsAreDiscoveredAndRun(t *testing.T) {
	s := setOf(t, map[string]string{"resource.customizations.actions.example.com_Widget": restartActions})
	w := object(t, `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: demo}
spec:
  replicas: 3
  paused: true
  ports: []
  template: {spec: {containers: [{name: c, image: nginx}]}}
`)
	actions, err := s.Actions(w)
	require.NoError(t, err)
	assert.Equal(t, []Action{{Name: "pause", Disabled: true}, {Name: "restart"}}, actions)

	out, err := s.RunAction(w, "restart", nil)
	require.NoError(t, err)
	require.Len(t, out, 1)
	assert.Equal(t, "patch", out[0].Operation)
	got := out[0].Object
	ann, _, _ := unstructured.NestedString(got.Object, "spec", "template", "metadata", "annotations", "example.com/restartedAt")
	assert.Equal(t, "now", ann)
	replicas, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas")
	assert.EqualValues(t, 3, replicas, "numbers come back as integers")
	ports, found, _ := unstructured.NestedSlice(got.Object, "spec", "ports")
	assert.True(t, found)
	assert.Empty(t, ports, "an empty list stays a list")
	_, found, _ = unstructured.NestedFieldNoCopy(w.Object, "spec", "template", "metadata")
	assert.False(t, found, "the object given is not changed")

	_, err = s.RunAction(w, "pause", nil)
	assert.ErrorContains(t, err, `action "pause" is disabled for Widget w`)
	_, err = s.RunAction(w, "scale", nil)
	assert.ErrorContains(t, err, `Widget w has no action "scale": define it under resource.customizations.actions.example.com_Widget`)
}

func TestActionMayReturnImpactedResources(t *testing.T) {
	s := setOf(t, map[string]string{"resource.customizations.actions.batch_CronJob": `
definitions:
- name: create-job
  action.lua: |
    local job = {apiVersion = "batch/v1", kind = "Job", metadata = {name = obj.metadata.name .. "-manual", namespace = obj.metadata.namespace}}
    return {{operation = "create", resource = job}}
`})
	out, err := s.RunAction(object(t, "{apiVersion: batch/v1, kind: CronJob, metadata: {name: nightly, namespace: ops}}"), "create-job", nil)
	require.NoError(t, err)
	require.Len(t, out, 1)
	assert.Equal(t, "create", out[0].Operation)
	assert.Equal(t, "nightly-manual", out[0].Object.GetName())
	assert.True(t, strings.HasPrefix(out[0].Object.GetAPIVersion(), "batch/"))
}

func TestIgnoreAllGivesEveryEntryItsGroupAndKind(t *testing.T) {
	s := setOf(t, map[string]string{
		"resource.customizations.ignoreDifferences.apps_Deployment": "jsonPointers: [/spec/replicas]",
		"resource.customizations.ignoreDifferences.Service":         "jsonPointers: [/spec/clusterIP]",
		"resource.customizations.ignoreDifferences.all":             "managedFieldsManagers: [hpa]",
		"resource.customizations.health.apps_Deployment":            "return {status = 'Healthy'}",
	})
	got := s.IgnoreAll()
	require.Len(t, got, 3)
	assert.Equal(t, []string{"*/*", "/Service", "apps/Deployment"},
		[]string{got[0].Group + "/" + got[0].Kind, got[1].Group + "/" + got[1].Kind, got[2].Group + "/" + got[2].Kind})
	assert.Equal(t, []string{"hpa"}, got[0].ManagedFieldsManagers)
}
