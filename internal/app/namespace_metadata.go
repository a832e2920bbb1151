package app

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/validation"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ManagedNamespaceMetadata is Argo CD's syncPolicy.managedNamespaceMetadata:
// labels and annotations that the namespace CreateNamespace=true makes
// carries, applied at every sync so that they follow the spec. Labels and
// annotations others set on the namespace stay.
type ManagedNamespaceMetadata struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// NamespaceMetadata is the app's managedNamespaceMetadata; nil without one.
func (a *Application) NamespaceMetadata() *ManagedNamespaceMetadata {
	if sp := a.Spec.SyncPolicy; sp != nil {
		return sp.ManagedNamespaceMetadata
	}
	return nil
}

// managedNamespaceMetadata checks the labels and annotations as the API
// server would, and that CreateNamespace=true makes the namespace they are
// for (without it Argo CD does nothing with them).
func (v *validator) managedNamespaceMetadata(sp *SyncPolicy) {
	m := sp.ManagedNamespaceMetadata
	if m == nil {
		return
	}
	const path = "spec.syncPolicy.managedNamespaceMetadata"
	if opts, err := ParseSyncOptions(sp.SyncOptions); err == nil && !opts.CreateNamespace {
		v.add(path, "takes effect only on a namespace that CreateNamespace=true creates: add CreateNamespace=true to spec.syncPolicy.syncOptions, or remove it")
	}
	for _, e := range metavalidation.ValidateLabels(m.Labels, field.NewPath(path, "labels")) {
		v.add(e.Field, "%s", fieldErrorMessage(e))
	}
	for _, e := range validation.ValidateAnnotations(m.Annotations, field.NewPath(path, "annotations")) {
		v.add(e.Field, "%s", fieldErrorMessage(e))
	}
}

// fieldErrorMessage is an apimachinery field error without its path (the
// validator names the field).
func fieldErrorMessage(e *field.Error) string {
	msg := e.ErrorBody()
	if e.BadValue != nil && e.Type == field.ErrorTypeInvalid {
		if s, ok := e.BadValue.(string); ok && !strings.Contains(msg, s) {
			msg = fmt.Sprintf("%q: %s", s, msg)
		}
	}
	return msg
}
