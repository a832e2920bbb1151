package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// auditLog writes a JSON line for every change the server allows and
// every request it denies: who, what, which object, the verdict and why.
// A decision about an app whose Application object is in the control
// cluster is also an Event on that object, as Argo CD records them.
type auditLog struct {
	mu   sync.Mutex
	out  io.Writer
	file *os.File
	kube kubernetes.Interface
	ns   string
}

// auditEntry is one line of the audit log.
type auditEntry struct {
	Time     time.Time `json:"time"`
	User     string    `json:"user"`
	Groups   []string  `json:"groups,omitempty"`
	Source   string    `json:"source"`
	Resource string    `json:"resource"`
	Action   string    `json:"action"`
	Object   string    `json:"object"`
	Allowed  bool      `json:"allowed"`
	// Reason is why: the subject whose policy allowed it, or what was
	// missing.
	Reason string `json:"reason"`
}

func openAudit(path string, kc kubernetes.Interface, ns string) (*auditLog, error) {
	a := &auditLog{out: os.Stdout, kube: kc, ns: ns}
	if path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return nil, fmt.Errorf("--audit-log: %w", err)
		}
		a.out, a.file = f, f
	}
	return a, nil
}

func (a *auditLog) close() {
	if a.file != nil {
		_ = a.file.Close()
	}
}

// record writes e.
func (a *auditLog) record(e auditEntry) {
	e.Time = time.Now().UTC()
	b, _ := json.Marshal(e)
	a.mu.Lock()
	defer a.mu.Unlock()
	_, _ = a.out.Write(append(b, '\n'))
}

// event records an Event on the Application object ns/name, as Argo CD
// does for what a user did ("admin initiated sync"); an app without an
// object gets none. It does not block the request.
func (a *auditLog) event(ctx context.Context, objNS, objName, reason, message string, warning bool) {
	if objNS == "" {
		return
	}
	typ := corev1.EventTypeNormal
	if warning {
		typ = corev1.EventTypeWarning
	}
	now := metav1.NewTime(time.Now())
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: objName + ".", Namespace: objNS},
		InvolvedObject: corev1.ObjectReference{APIVersion: "argoproj.io/v1alpha1", Kind: "Application",
			Namespace: objNS, Name: objName},
		Reason: reason, Message: message, Type: typ, FirstTimestamp: now, LastTimestamp: now, Count: 1,
		Source: corev1.EventSource{Component: "ferry-server"}, ReportingController: "ferry-server",
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_, _ = a.kube.CoreV1().Events(objNS).Create(ctx, ev, metav1.CreateOptions{})
	}()
}
