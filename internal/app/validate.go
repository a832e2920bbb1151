package app

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/itchyny/gojq"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ferry-gitops/ferry/internal/regions"
)

// MaxNameLength bounds an Application's metadata.name as Argo CD does: a
// DNS subdomain of at most 253 characters. The objects' label carries a
// shortened form (kube.AppLabel) where it does not fit.
const MaxNameLength = 253

// MaxProjectNameLength bounds an AppProject's name and spec.project.
const MaxProjectNameLength = 53

// MaxReleaseNameLength is Helm's limit on a release name: the Helm source's
// releaseName, or the app's name when it sets none.
const MaxReleaseNameLength = 53

// ValidateOptions describe the Ferry installation an Application is checked
// against.
type ValidateOptions struct {
	// Regions are the regions the operator runs workers for, and how
	// destinations map to them (names, aliases, server URLs, the in-cluster
	// region). Nil is no configuration: any well-formed region name, and
	// Argo CD's in-cluster destination is the region named in-cluster.
	Regions *regions.Config
}

// FieldError is one problem with one field of an Application.
type FieldError struct {
	// Field is the path of the field, e.g. spec.destinations[1].name.
	Field string `json:"field"`
	// Message says what is wrong and what to do about it.
	Message string `json:"message"`
}

func (e FieldError) Error() string { return e.Field + ": " + e.Message }

// ValidationError lists every problem found in one Application, so that a
// user fixes the file once rather than once per problem. Parse returns it for
// unknown, unsupported and mistyped fields, Validate for wrong values.
type ValidationError struct {
	// Kind is the kind of the object, named in lower case at the head of
	// the message (appproject "team-a": ...); empty for an Application.
	Kind string `json:"kind,omitempty"`
	// App is metadata.name, empty when the file has none.
	App    string       `json:"app"`
	Errors []FieldError `json:"errors"`
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Errors))
	for i, fe := range e.Errors {
		parts[i] = fe.Error()
	}
	noun := "application"
	if e.Kind != "" {
		noun = strings.ToLower(e.Kind)
	}
	subject := noun + " (unnamed)"
	if e.App != "" {
		subject = fmt.Sprintf("%s %q", noun, e.App)
	}
	return subject + ": " + strings.Join(parts, "; ")
}

// IsValidationError reports whether err is or wraps a *ValidationError: the
// input is wrong and retrying it cannot help.
func IsValidationError(err error) bool {
	var ve *ValidationError
	return errors.As(err, &ve)
}

// Validate checks the values of an Application that Parse has read (or that
// was built in code) and returns nil or a *ValidationError listing every
// problem, each naming its field and what to do.
func Validate(a *Application, opts ValidateOptions) error {
	if a == nil {
		return &ValidationError{Errors: []FieldError{{Field: "(root)", Message: "no Application given"}}}
	}
	v := &validator{opts: opts}
	v.object(a)
	if a.IsMultiSource() {
		v.sources(a) // validate_sources.go
	} else {
		v.source(&a.Spec.Source, a.ReleaseName())
	}
	v.destinations(&a.Spec)
	v.syncPolicy(a.Spec.SyncPolicy)
	v.rollout(a)
	v.ignoreDifferences(a.Spec.IgnoreDifferences)
	if s := a.Spec.PollInterval; s != "" {
		d, err := time.ParseDuration(s)
		switch {
		case err != nil:
			v.add("spec.pollInterval", "%q is not a duration: write it like 30s, 3m or 1h", s)
		case d < MinPollInterval:
			v.add("spec.pollInterval", "%s is too short: poll at most once a second (%s or more), or remove the field for the default %s",
				s, MinPollInterval, DefaultPollInterval)
		}
	}
	if n := a.Spec.RevisionHistoryLimit; n != nil && *n < 0 {
		v.add("spec.revisionHistoryLimit", "%d is negative: write how many deployments to keep in the history (0 keeps none), or remove the field for %d",
			*n, HistoryLimit)
	}
	for i, info := range a.Spec.Info {
		if strings.TrimSpace(info.Name) == "" {
			v.add(fmt.Sprintf("spec.info[%d].name", i), "required: the label shown beside the value, e.g. Documentation")
		}
	}
	if len(v.errs) == 0 {
		return nil
	}
	if a.sourceFromSources {
		renameSourceFields(v.errs)
	}
	return &ValidationError{App: a.Metadata.Name, Errors: v.errs}
}

type validator struct {
	opts ValidateOptions
	errs []FieldError
	// refs are the refs of spec.sources, by name, for $ref value files;
	// nil for an app of one source.
	refs map[string]int
}

func (v *validator) add(field, format string, args ...any) {
	v.errs = append(v.errs, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

func (v *validator) object(a *Application) {
	switch a.APIVersion {
	case APIVersion:
	case "":
		v.add("apiVersion", "required: write apiVersion: %s", APIVersion)
	default:
		v.add("apiVersion", "%q is not supported: write apiVersion: %s", a.APIVersion, APIVersion)
	}
	switch a.Kind {
	case Kind:
	case "":
		v.add("kind", "required: write kind: %s", Kind)
	default:
		v.add("kind", "%q is not supported: write kind: %s", a.Kind, Kind)
	}

	md := a.Metadata
	ns, name := SplitName(md.Name)
	switch errs := validation.IsDNS1123Subdomain(name); {
	case md.Name == "":
		v.add("metadata.name", "required: the Application's name, e.g. guestbook")
	case strings.Contains(md.Name, "/") && (ns == "" || ns != md.Namespace):
		v.add("metadata.name", "%q names namespace %q, and metadata.namespace is %q: write the name alone (web) and the namespace in metadata.namespace",
			md.Name, ns, md.Namespace)
	case len(errs) > 0:
		v.add("metadata.name", "%q is not a valid name: %s", md.Name, strings.Join(errs, "; "))
	}
	v.metaFields(md)
	if value, ok := md.Annotations[AnnotationCompareOptions]; ok {
		for _, msg := range checkAppCompareOptions(value) {
			v.add(fmt.Sprintf("metadata.annotations[%q]", AnnotationCompareOptions), "%s", msg)
		}
	}
	v.finalizers(md.Finalizers)
	if p := a.Spec.Project; p != "" {
		if errs := validation.IsDNS1123Subdomain(p); len(errs) > 0 || len(p) > MaxProjectNameLength {
			v.add("spec.project", "%q is not a project name (a DNS name of at most %d characters): write the name of an AppProject (see ferry project list), or default",
				p, MaxProjectNameLength)
		}
	}
}

func (v *validator) labels(field string, labels map[string]string) {
	for _, k := range sortedKeys(labels) {
		p := fmt.Sprintf("%s[%q]", field, k)
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			v.add(p, "not a valid label key: %s", strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(labels[k]); len(errs) > 0 {
			v.add(p, "%q is not a valid label value: %s", labels[k], strings.Join(errs, "; "))
		}
	}
}

func (v *validator) syncPolicy(sp *SyncPolicy) {
	if sp == nil {
		return
	}
	var all SyncOptions
	parsed := true
	for i, item := range sp.SyncOptions {
		var o SyncOptions
		if err := o.apply(item); err != nil {
			if _, unknown := errors.AsType[*UnknownSyncOptionError](err); unknown {
				continue // ignored, as Argo CD ignores it: a warning (Warnings)
			}
			v.add(fmt.Sprintf("spec.syncPolicy.syncOptions[%d]", i), "%s", err.Error())
			parsed = false
		}
		_ = all.apply(item)
	}
	if err := all.Unsupported(); err != nil && parsed {
		v.add(fmt.Sprintf("spec.syncPolicy.syncOptions[%d]", lastSyncOption(sp.SyncOptions, "ServerSideApply")), "%s", err.Error())
	}
	v.managedNamespaceMetadata(sp)
	if sp.Retry == nil || sp.Retry.Backoff == nil {
		return
	}
	b := sp.Retry.Backoff
	for _, f := range []struct{ name, value string }{{"duration", b.Duration}, {"maxDuration", b.MaxDuration}} {
		if f.value == "" {
			continue
		}
		if d, err := parseBackoffDuration(f.value); err != nil || d <= 0 {
			v.add("spec.syncPolicy.retry.backoff."+f.name, "%q is not a positive duration: write it like 5s or 3m (a bare number counts seconds)", f.value)
		}
	}
	if b.Factor != nil && *b.Factor < 1 {
		v.add("spec.syncPolicy.retry.backoff.factor", "%d is too small: the delay is multiplied by factor after each retry, so use 1 (constant) or more (default %d)",
			*b.Factor, DefaultBackoffFactor)
	}
}

// lastSyncOption is the index of the last item setting key: the one that
// decides.
func lastSyncOption(items []string, key string) int {
	last := 0
	for i, item := range items {
		if k, _, _ := strings.Cut(strings.TrimSpace(item), "="); k == key {
			last = i
		}
	}
	return last
}

// ignoreDifferences checks each entry's fields. An entry with none of
// jsonPointers, jqPathExpressions and managedFieldsManagers is accepted and
// ignores nothing, as in Argo CD (real files carry such placeholders).
func (v *validator) ignoreDifferences(ids []IgnoreDifference) {
	for i, id := range ids {
		p := fmt.Sprintf("spec.ignoreDifferences[%d]", i)
		if id.Kind == "" {
			v.add(p+".kind", "required: the kind of the resources whose differences to ignore, e.g. Deployment")
		}
		for j, ptr := range id.JSONPointers {
			if msg := checkJSONPointer(ptr); msg != "" {
				v.add(fmt.Sprintf("%s.jsonPointers[%d]", p, j), "%q %s", ptr, msg)
			}
		}
		for j, expr := range id.JQPathExpressions {
			if _, err := gojq.Parse(expr); err != nil {
				v.add(fmt.Sprintf("%s.jqPathExpressions[%d]", p, j), "%q is not a jq expression (%v): write a path such as .spec.replicas", expr, err)
			}
		}
		for j, m := range id.ManagedFieldsManagers {
			if strings.TrimSpace(m) == "" {
				v.add(fmt.Sprintf("%s.managedFieldsManagers[%d]", p, j), "empty: name a field manager as metadata.managedFields shows it, e.g. kube-controller-manager")
			}
		}
	}
}

// checkJSONPointer checks RFC 6901 syntax: "/" before each reference token,
// "~" only as "~0" or "~1".
func checkJSONPointer(ptr string) string {
	if !strings.HasPrefix(ptr, "/") {
		return "is not a JSON pointer: it must start with '/', e.g. /spec/replicas"
	}
	for i := 0; i < len(ptr); i++ {
		if ptr[i] == '~' && (i+1 == len(ptr) || (ptr[i+1] != '0' && ptr[i+1] != '1')) {
			return "is not a JSON pointer: write '~' as ~0 and '/' inside a key as ~1"
		}
	}
	return ""
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// metaFields checks what Kubernetes checks of any object's metadata: the
// namespace, the label and the annotation keys.
func (v *validator) metaFields(md ObjectMeta) {
	if md.Namespace != "" {
		if errs := validation.IsDNS1123Label(md.Namespace); len(errs) > 0 {
			v.add("metadata.namespace", "%q is not a valid namespace: %s", md.Namespace, strings.Join(errs, "; "))
		}
	}
	v.labels("metadata.labels", md.Labels)
	for _, k := range sortedKeys(md.Annotations) {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			v.add(fmt.Sprintf("metadata.annotations[%q]", k), "not a valid annotation key: %s", strings.Join(errs, "; "))
		}
	}
}
