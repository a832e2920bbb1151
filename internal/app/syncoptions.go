package app

import (
	"cmp"
	"errors"
	"fmt"
	"strings"
)

// Propagation policies for PrunePropagationPolicy.
const (
	PropagationForeground = "foreground"
	PropagationBackground = "background"
	PropagationOrphan     = "orphan"
)

// SyncOptions are Argo CD's sync options, from spec.syncPolicy.syncOptions
// or a resource's sync-options annotation. Each field is what the option
// asks for; options written with their no-op value (Validate=true,
// Prune=true) leave the field false.
type SyncOptions struct {
	CreateNamespace bool // CreateNamespace=true: create destination.namespace if missing
	// ClientSideApply: ServerSideApply=false, a client-side apply, which
	// Ferry does not have (Unsupported refuses it unless Replace=true, which
	// does not apply at all). ServerSideApply=true is what Ferry always does.
	ClientSideApply    bool
	Replace            bool // Replace=true: replace (create/update) instead of apply
	Force              bool // Force=true: delete and recreate when a replace or apply fails
	ValidateFalse      bool // Validate=false: skip schema validation (kubectl --validate=false)
	ApplyOutOfSyncOnly bool // ApplyOutOfSyncOnly=true: apply only out-of-sync resources
	PruneLast          bool // PruneLast=true: prune after every other resource synced and is healthy
	PruneFalse         bool // Prune=false: never prune this (resource-level)
	DeleteFalse        bool // Delete=false: keep this when the app is deleted (resource-level)
	// PruneConfirm (Prune=confirm): a sync prunes nothing until the app's
	// operation is confirmed (ferry app confirm), as Argo CD waits for its
	// deletion approval.
	PruneConfirm bool
	// DeleteConfirm (Delete=confirm): the app's cascading delete deletes
	// nothing until it is confirmed (ferry app confirm).
	DeleteConfirm bool
	// PrunePropagationPolicy is foreground, background or orphan; empty
	// means foreground (see PropagationPolicy).
	PrunePropagationPolicy      string
	FailOnSharedResource        bool // FailOnSharedResource=true: fail when another app owns a resource
	RespectIgnoreDifferences    bool // RespectIgnoreDifferences=true: keep ignored fields' live values when syncing
	SkipDryRunOnMissingResource bool // SkipDryRunOnMissingResource=true: no dry run when the CRD is not installed yet
}

// PropagationPolicy is the deletion propagation for prunes, foreground when
// unset as in Argo CD.
func (o SyncOptions) PropagationPolicy() string {
	if o.PrunePropagationPolicy == "" {
		return PropagationForeground
	}
	return o.PrunePropagationPolicy
}

// boolSyncOptions maps each boolean option to its field, in the order error
// messages list them.
var boolSyncOptions = []struct {
	key   string
	field func(*SyncOptions) *bool
	// invert: the field records the false value (Validate=false, Prune=false).
	invert bool
}{
	{"CreateNamespace", func(o *SyncOptions) *bool { return &o.CreateNamespace }, false},
	{"ServerSideApply", func(o *SyncOptions) *bool { return &o.ClientSideApply }, true},
	{"Replace", func(o *SyncOptions) *bool { return &o.Replace }, false},
	{"Force", func(o *SyncOptions) *bool { return &o.Force }, false},
	{"Validate", func(o *SyncOptions) *bool { return &o.ValidateFalse }, true},
	{"ApplyOutOfSyncOnly", func(o *SyncOptions) *bool { return &o.ApplyOutOfSyncOnly }, false},
	{"PruneLast", func(o *SyncOptions) *bool { return &o.PruneLast }, false},
	{"Prune", func(o *SyncOptions) *bool { return &o.PruneFalse }, true},
	{"Delete", func(o *SyncOptions) *bool { return &o.DeleteFalse }, true},
	{"FailOnSharedResource", func(o *SyncOptions) *bool { return &o.FailOnSharedResource }, false},
	{"RespectIgnoreDifferences", func(o *SyncOptions) *bool { return &o.RespectIgnoreDifferences }, false},
	{"SkipDryRunOnMissingResource", func(o *SyncOptions) *bool { return &o.SkipDryRunOnMissingResource }, false},
}

func knownSyncOptions() string {
	var names []string
	for _, b := range boolSyncOptions {
		names = append(names, b.key+"=true|false")
	}
	names = append(names, "Prune=confirm", "Delete=confirm", "PrunePropagationPolicy=foreground|background|orphan")
	return strings.Join(names, ", ")
}

// ParseSyncOptions parses an app's syncOptions items such as
// "CreateNamespace=true". It reports every item that is malformed or has a
// wrong value; an item whose key Argo CD does not have is ignored, as Argo
// CD ignores it (Application.Warnings names it).
func ParseSyncOptions(items []string) (SyncOptions, error) {
	var o SyncOptions
	var errs []error
	for _, item := range items {
		if err := o.apply(item); err != nil {
			if _, unknown := errors.AsType[*UnknownSyncOptionError](err); !unknown {
				errs = append(errs, err)
			}
		}
	}
	return o, errors.Join(errs...)
}

// ParseSyncOptionsAnnotation parses the comma-separated value of a
// resource's argocd.argoproj.io/sync-options annotation.
func ParseSyncOptionsAnnotation(value string) (SyncOptions, error) {
	return SyncOptions{}.WithAnnotation(value)
}

// With returns o with items applied on top, each overriding what o says:
// an app's options with a resource's items give that resource's options
// (Prune=false on a resource keeps it out of the app's prunes).
func (o SyncOptions) With(items []string) (SyncOptions, error) {
	var errs []error
	for _, item := range items {
		if err := o.apply(item); err != nil {
			errs = append(errs, err)
		}
	}
	return o, errors.Join(errs...)
}

// WithAnnotation is With for the comma-separated annotation value.
func (o SyncOptions) WithAnnotation(value string) (SyncOptions, error) {
	return o.With(splitOptions(value))
}

func (o *SyncOptions) apply(item string) error {
	key, value, ok := strings.Cut(strings.TrimSpace(item), "=")
	if !ok {
		return fmt.Errorf("sync option %q is not in Key=Value form: write e.g. %s=true", item, cmp.Or(closestSyncOption(key), "CreateNamespace"))
	}
	if key == "PrunePropagationPolicy" {
		switch value {
		case PropagationForeground, PropagationBackground, PropagationOrphan:
			o.PrunePropagationPolicy = value
			return nil
		}
		return fmt.Errorf("sync option %q: PrunePropagationPolicy takes foreground, background or orphan", item)
	}
	// Prune and Delete take a third value, confirm; any value replaces
	// what an earlier item said.
	switch key {
	case "Prune":
		o.PruneConfirm = value == "confirm"
	case "Delete":
		o.DeleteConfirm = value == "confirm"
	}
	if (key == "Prune" || key == "Delete") && value == "confirm" {
		if key == "Prune" {
			o.PruneFalse = false
		} else {
			o.DeleteFalse = false
		}
		return nil
	}
	for _, b := range boolSyncOptions {
		if b.key != key {
			continue
		}
		var v bool
		switch value {
		case "true":
			v = true
		case "false":
		default:
			if key == "Prune" || key == "Delete" {
				return fmt.Errorf("sync option %q: %s takes true, false or confirm", item, key)
			}
			return fmt.Errorf("sync option %q: %s takes true or false", item, key)
		}
		*b.field(o) = v != b.invert
		return nil
	}
	if near := closestSyncOption(key); near != "" {
		return &UnknownSyncOptionError{fmt.Sprintf("sync option %q is unknown: did you mean %s=%s?", item, near, value)}
	}
	return &UnknownSyncOptionError{fmt.Sprintf("sync option %q is unknown: known options are %s", item, knownSyncOptions())}
}

// UnknownSyncOptionError is a Key=Value sync option whose key Argo CD does
// not have: Argo CD ignores it, and so does an app's spec.syncPolicy in
// Ferry, with a warning (Application.Warnings) instead of a refusal.
type UnknownSyncOptionError struct{ msg string }

func (e *UnknownSyncOptionError) Error() string { return e.msg }

// closestSyncOption is the known key that key differs from only in case, or "".
func closestSyncOption(key string) string {
	for _, b := range boolSyncOptions {
		if strings.EqualFold(b.key, key) {
			return b.key
		}
	}
	if strings.EqualFold(key, "PrunePropagationPolicy") {
		return "PrunePropagationPolicy"
	}
	return ""
}

// Unsupported returns the error for options that parse but that Ferry
// cannot honour, or nil. It is one check for the app's syncOptions
// (validation) and a resource's annotation on top of them (the sync).
//
// ServerSideApply=false asks for Argo CD's client-side apply (kubectl apply
// with the last-applied-configuration annotation and a three-way merge on
// the client). Ferry has one write path, server-side apply, and taking the
// option while applying server-side anyway would ignore it, so it is
// refused. With Replace=true it is moot, as in Argo CD: a replace applies
// nothing.
func (o SyncOptions) Unsupported() error {
	if o.ClientSideApply && !o.Replace {
		return errors.New(`sync option "ServerSideApply=false" asks for a client-side apply, which Ferry does not do (it always applies server-side): remove it, or write ServerSideApply=true`)
	}
	return nil
}
