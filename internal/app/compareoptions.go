package app

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// CompareOptions are the compare options of one resource.
type CompareOptions struct {
	// IgnoreExtraneous: when the app no longer wants the resource, it does
	// not make the app OutOfSync (a prune still deletes it).
	IgnoreExtraneous bool
}

// Ferry compares as Argo CD's server-side diff with IncludeMutationWebhook
// does: a server-side dry run of the same apply, whose answer holds what
// defaults, admission and mutating webhooks make of the object. The options
// that ask for that are accepted; those that ask for another comparison,
// which Ferry does not have, are refused by name.
const (
	notClientDiff   = "Ferry always compares server-side (a dry-run apply); remove the option, or write ServerSideDiff=true"
	notWithoutHooks = "Ferry's comparison always includes what mutating webhooks change (a dry-run apply goes through admission); remove the option, or write IncludeMutationWebhook=true"
)

// ParseCompareOptions parses a resource's compare-options annotation. It
// reports every option that is unknown, that belongs on the Application,
// or that Ferry cannot honour.
func ParseCompareOptions(value string) (CompareOptions, error) {
	var o CompareOptions
	var errs []error
	for _, item := range splitOptions(value) {
		switch item {
		case "IgnoreExtraneous":
			o.IgnoreExtraneous = true
			continue
		}
		key, _, _ := strings.Cut(item, "=")
		switch key {
		case "ServerSideDiff", "IncludeMutationWebhook":
			errs = append(errs, fmt.Errorf("compare option %q is an Application's, not a resource's: set it in the Application's metadata.annotations[%q], or remove it here", item, AnnotationCompareOptions))
		default:
			errs = append(errs, unknownCompareOption(item, "IgnoreExtraneous"))
		}
	}
	return o, errors.Join(errs...)
}

// checkAppCompareOptions checks the compare-options annotation of an
// Application and returns a message per problem.
func checkAppCompareOptions(value string) []string {
	var msgs []string
	for _, item := range splitOptions(value) {
		switch item {
		case "ServerSideDiff=true", "IncludeMutationWebhook=true":
			// What Ferry always does.
		case "ServerSideDiff=false":
			msgs = append(msgs, fmt.Sprintf("compare option %q asks for a client-side diff: %s", item, notClientDiff))
		case "IncludeMutationWebhook=false":
			msgs = append(msgs, fmt.Sprintf("compare option %q asks to leave out what mutating webhooks change: %s", item, notWithoutHooks))
		case "IgnoreExtraneous":
			// Read by the app of apps that manages this Application as
			// one of its resources (IgnoresExtraneous), as Argo CD reads
			// it; not an option of this app's own compare.
		default:
			msgs = append(msgs, unknownCompareOption(item, "ServerSideDiff=true, IncludeMutationWebhook=true").Error())
		}
	}
	return msgs
}

// IgnoresExtraneous tells whether the app's compare-options annotation says
// IgnoreExtraneous: once the app of apps that created it no longer has it
// in Git, it shows OutOfSync there without making the parent OutOfSync, as
// Argo CD reads the annotation of a managed Application.
func (a *Application) IgnoresExtraneous() bool {
	return slices.Contains(splitOptions(a.Metadata.Annotations[AnnotationCompareOptions]), "IgnoreExtraneous")
}

func unknownCompareOption(item, known string) error {
	key, _, _ := strings.Cut(item, "=")
	for _, k := range []string{"IgnoreExtraneous", "ServerSideDiff", "IncludeMutationWebhook"} {
		if strings.EqualFold(k, key) && k != key {
			return fmt.Errorf("compare option %q is unknown: did you mean %s?", item, k)
		}
	}
	return fmt.Errorf("compare option %q is unknown here: known options are %s", item, known)
}

// splitOptions splits a comma-separated annotation value, trimming spaces
// and dropping empty items.
func splitOptions(value string) []string {
	var items []string
	for _, item := range strings.Split(value, ",") {
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
	return items
}
