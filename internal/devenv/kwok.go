package devenv

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// FailLabel on a pod makes the fake kubelet fail it: phase Failed, its
// containers terminated with exit code 1 and reason Error. A Job whose pod
// template carries it (with backoffLimit 0) ends Failed. Meant for Jobs and
// bare pods: a Deployment's failed pods are replaced, again and again.
const FailLabel = "ferry.dev/fail"

// kwokStages names the stage files taken from kwok's kustomize/stage copy in
// the tools bin dir (kwok-stage/), relative to it.
var kwokStages = []string{
	"node/fast/node-initialize.yaml",
	"node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
	"pod/fast/pod-ready.yaml",
	"pod/fast/pod-complete.yaml",
	"pod/fast/pod-delete.yaml",
}

// podFailStage is ours: a running pod labelled FailLabel=true fails. kwok
// picks one stage at random among those whose selectors match (weights only
// bias the draw), so pod-complete gets a selector that excludes these pods
// instead of relying on a weight.
const podFailStage = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-fail
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.labels["` + FailLabel + `"]'
      operator: 'In'
      values:
      - 'true'
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Running'
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Initialized
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        reason: PodFailed
        type: Ready
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        reason: PodFailed
        type: ContainersReady
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: false
        restartCount: 0
        started: false
        state:
          terminated:
            exitCode: 1
            finishedAt: {{ $now | Quote }}
            reason: Error
            message: "failed on purpose: the pod is labelled ` + FailLabel + `=true"
            startedAt: {{ $now | Quote }}
      {{ end }}
      phase: Failed
`

// notFailing is the selector term added to the stages that must leave
// FailLabel'd pods to pod-fail.
var notFailing = map[string]any{
	"key":      `.metadata.labels["` + FailLabel + `"]`,
	"operator": "NotIn",
	"values":   []any{"true"},
}

// FakeLogLine is the log of every container on the fake Node: kwok runs
// none, and serves this line (from a CRI-format file) to kubectl logs.
const FakeLogLine = "ferry dev: kwok runs no containers; this line stands for the container's log"

// podLogs makes kwok's server answer every container's logs from logsFile.
const podLogs = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata:
  name: every-pod
spec:
  logs:
  - logsFile: %q
`

// writeKwokConfig writes one multi-document kwok --config file with the
// stages from stageDir plus pod-fail, and the logs of every pod, which it
// writes to logsFile.
func writeKwokConfig(path, stageDir, logsFile string) error {
	if err := os.WriteFile(logsFile, []byte("2026-01-01T00:00:00.000000000Z stdout F "+FakeLogLine+"\n"), 0o644); err != nil {
		return fmt.Errorf("write fake pod log: %w", err)
	}
	var out bytes.Buffer
	for _, rel := range kwokStages {
		src := filepath.Join(stageDir, rel)
		data, err := os.ReadFile(src)
		if err != nil {
			return fmt.Errorf("read kwok stage %s (run hack/tools.sh again?): %w", src, err)
		}
		if filepath.Base(rel) == "pod-complete.yaml" {
			if data, err = excludeFailing(data); err != nil {
				return fmt.Errorf("kwok stage %s: %w", src, err)
			}
		}
		out.WriteString("---\n")
		out.Write(data)
		out.WriteString("\n")
	}
	out.WriteString("---\n")
	out.WriteString(podFailStage)
	fmt.Fprintf(&out, "---\n"+podLogs, logsFile)
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write kwok config: %w", err)
	}
	return nil
}

// excludeFailing adds the notFailing term to a stage's matchExpressions.
func excludeFailing(stage []byte) ([]byte, error) {
	var obj map[string]any
	if err := yaml.Unmarshal(stage, &obj); err != nil {
		return nil, err
	}
	spec, _ := obj["spec"].(map[string]any)
	selector, _ := spec["selector"].(map[string]any)
	if selector == nil {
		return nil, fmt.Errorf("no spec.selector to extend")
	}
	exprs, _ := selector["matchExpressions"].([]any)
	selector["matchExpressions"] = append(exprs, notFailing)
	return yaml.Marshal(obj)
}
