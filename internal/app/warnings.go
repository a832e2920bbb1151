package app

import (
	"errors"
	"fmt"
)

// Warnings name what an accepted app holds that Ferry ignores, as Argo CD
// does: sync options in spec.syncPolicy.syncOptions that Argo CD does not
// know (Retry=true). ferry app apply prints them on stderr, each with the
// app, the field and the option.
func (a *Application) Warnings() []string {
	if a.Spec.SyncPolicy == nil {
		return nil
	}
	var out []string
	for i, item := range a.Spec.SyncPolicy.SyncOptions {
		var o SyncOptions
		err := o.apply(item)
		if _, unknown := errors.AsType[*UnknownSyncOptionError](err); unknown {
			out = append(out, fmt.Sprintf("application %q: spec.syncPolicy.syncOptions[%d]: %s; it is ignored, as Argo CD ignores it: remove it, or fix its name",
				a.Metadata.Name, i, err))
		}
	}
	return out
}
