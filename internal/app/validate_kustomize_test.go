package app

import (
	"strings"
	"testing"
)

// Argo CD's Kustomize fields are read as written; wrong values are named.
func TestKustomizeFields(t *testing.T) {
	const head = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: k}
spec:
  destination: {name: us-east-1}
  source:
    repoURL: https://git.example.com/org/apps.git
    path: app
    kustomize:
`
	a, err := Read([]byte(head+`      version: v5.4.3
      forceCommonLabels: true
      forceCommonAnnotations: true
      commonAnnotationsEnvsubst: true
      labelWithoutSelector: true
      labelIncludeTemplates: true
      kubeVersion: 1.30.0
      apiVersions: [monitoring.coreos.com/v1]
      ignoreMissingComponents: true
      components: [../components/a]
      replicas: [{name: web, count: 3}, {name: api, count: "2"}]
      patches:
      - {path: patch.yaml}
      - target: {group: apps, version: v1, kind: Deployment, name: web, labelSelector: "a=b"}
        patch: '[{"op": "replace", "path": "/spec/replicas", "value": 1}]'
        options: {allowNameChange: true}
`), testOptions)
	if err != nil {
		t.Fatal(err)
	}
	k := a.Spec.Source.Kustomize
	if n, err := k.Replicas[1].ReplicaCount(); err != nil || n != 2 || k.Replicas[0].Count.IntValue() != 3 {
		t.Errorf("replicas = %+v", k.Replicas)
	}
	if k.Patches[1].Target.Kind != "Deployment" || !k.Patches[1].Options["allowNameChange"] {
		t.Errorf("patches = %+v", k.Patches)
	}

	_, err = Read([]byte(head+`      replicas: [{count: x}, {name: b, count: -1}, {name: c, count: [1]}]
      patches: [{}, {path: a.yaml, patch: x}, {path: /etc/p.yaml}]
      components: ["", "https://github.com/org/repo//c"]
`), testOptions)
	assertFieldErrors(t, err, []string{
		"spec.source.kustomize.replicas[0].name", "spec.source.kustomize.replicas[0].count",
		"spec.source.kustomize.replicas[1].count", "spec.source.kustomize.replicas[2].count",
		"spec.source.kustomize.patches[0]", "spec.source.kustomize.patches[1]", "spec.source.kustomize.patches[2].path",
		"spec.source.kustomize.components[0]", "spec.source.kustomize.components[1]",
	})
	if !strings.Contains(err.Error(), "a remote component") {
		t.Errorf("error: %v", err)
	}
}

func TestHelmFileParameters(t *testing.T) {
	const file = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: h}
spec:
  destination: {name: us-east-1}
  source:
    repoURL: https://git.example.com/org/apps.git
    path: chart
    helm:
      passCredentials: true
      fileParameters:
`
	a, err := Read([]byte(file+"      - {name: config.file, path: files/config.json}\n"), testOptions)
	if err != nil {
		t.Fatal(err)
	}
	if h := a.Spec.Source.Helm; !h.PassCredentials || h.FileParameters[0].Path != "files/config.json" {
		t.Errorf("helm = %+v", h)
	}
	_, err = Read([]byte(file+"      - {path: a.json}\n      - {name: b}\n      - {name: c, path: /etc/passwd}\n"), testOptions)
	assertFieldErrors(t, err, []string{"spec.source.helm.fileParameters[0].name", "spec.source.helm.fileParameters[1].path",
		"spec.source.helm.fileParameters[2].path"})
}
