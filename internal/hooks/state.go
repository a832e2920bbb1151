package hooks

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/health"
)

// Status is where one hook is.
type Status string

const (
	Running   Status = "Running"
	Succeeded Status = "Succeeded"
	Failed    Status = "Failed"
)

// deadlineGrace is how long past a Job's or Pod's activeDeadlineSeconds a
// hook is waited for, so that its controller can say it failed (and why)
// before Ferry gives up on it.
const deadlineGrace = 30 * time.Second

// state reads a live hook object: a Job until Complete or Failed, a Pod
// until Succeeded or Failed (or stuck, as hc sees it), any other kind
// until Healthy (Degraded fails it), as hc (the built-in checks and the
// operator's Lua health checks) tells.
func state(obj *unstructured.Unstructured, hc health.Checker) (Status, string) {
	if obj.GetDeletionTimestamp() != nil {
		return Failed, "deleted while it ran"
	}
	if obj.GroupVersionKind().Group == "" && obj.GetKind() == "Pod" {
		return podState(obj, hc)
	}
	code, msg := hc.Get(obj)
	switch code {
	case app.HealthHealthy:
		return Succeeded, msg
	case app.HealthDegraded:
		return Failed, msg
	}
	if msg == "" {
		msg = strings.ToLower(string(code))
	}
	return Running, msg
}

func podState(obj *unstructured.Unstructured, hc health.Checker) (Status, string) {
	var p corev1.Pod
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.UnstructuredContent(), &p); err != nil {
		return Running, "cannot read the pod: " + err.Error()
	}
	switch p.Status.Phase {
	case corev1.PodSucceeded:
		return Succeeded, "pod succeeded"
	case corev1.PodFailed:
		return Failed, podReason(&p)
	}
	if code, msg := hc.Get(obj); code == app.HealthDegraded {
		return Failed, msg
	}
	return Running, "pod is " + strings.ToLower(string(p.Status.Phase))
}

// podReason says why a pod failed: its first container that ended with an
// error (exit code, reason, message), else the pod's own reason.
func podReason(p *corev1.Pod) string {
	statuses := append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
	for _, c := range statuses {
		if t := c.State.Terminated; t != nil && t.ExitCode != 0 {
			msg := fmt.Sprintf("pod %s: container %q exited with code %d", p.Name, c.Name, t.ExitCode)
			if t.Reason != "" {
				msg += " (" + t.Reason + ")"
			}
			if t.Message != "" {
				msg += ": " + strings.TrimSpace(t.Message)
			}
			return msg
		}
	}
	for _, c := range statuses {
		if w := c.State.Waiting; w != nil && w.Reason != "" {
			return fmt.Sprintf("pod %s: container %q is waiting: %s", p.Name, c.Name, joinNonEmpty(w.Reason, w.Message))
		}
	}
	if r := joinNonEmpty(p.Status.Reason, p.Status.Message); r != "" {
		return fmt.Sprintf("pod %s: %s", p.Name, r)
	}
	return fmt.Sprintf("pod %s failed", p.Name)
}

// timeoutOf is how long a hook may run, from its creation: a Job's or
// Pod's activeDeadlineSeconds plus deadlineGrace, else def.
func timeoutOf(obj *unstructured.Unstructured, def time.Duration) time.Duration {
	var path []string
	switch obj.GroupVersionKind().Group + "/" + obj.GetKind() {
	case "batch/Job", "/Pod":
		path = []string{"spec", "activeDeadlineSeconds"}
	default:
		return def
	}
	secs, ok := deadlineSeconds(obj, path...)
	if !ok {
		return def
	}
	return time.Duration(secs)*time.Second + deadlineGrace
}

// deadlineSeconds reads a positive number of seconds, whether it was decoded
// as an integer (from the API server) or a float (from YAML).
func deadlineSeconds(obj *unstructured.Unstructured, path ...string) (int64, bool) {
	v, found, err := unstructured.NestedFieldNoCopy(obj.Object, path...)
	if !found || err != nil {
		return 0, false
	}
	var secs int64
	switch n := v.(type) {
	case int64:
		secs = n
	case int:
		secs = int64(n)
	case float64:
		secs = int64(n)
	}
	return secs, secs > 0
}

func joinNonEmpty(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, ": ")
}
