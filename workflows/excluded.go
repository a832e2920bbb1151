package workflows

import (
	"fmt"
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/internal/app"
)

// conditionExcludedResource is Argo CD's condition of an app whose
// manifests hold resources that resource.exclusions (or inclusions) leave
// alone: one condition a resource.
const conditionExcludedResource = "ExcludedResourceWarning"

// excludedMessage is Argo CD's message of one excluded resource.
func excludedMessage(k app.ResourceKey) string {
	return fmt.Sprintf("Resource %s/%s %s is excluded in the settings", k.Group, k.Kind, k.Name)
}

// noteExcluded keeps what a region's compare left out as excluded and
// sets the app's ExcludedResourceWarning conditions from every region's:
// one for each excluded resource, as Argo CD words it, and none once the
// resources are gone from the manifests (or no longer excluded). The data
// comes from the compare's result, so a history recorded before it sets
// none.
func (s *appState) noteExcluded(region string, keys []app.ResourceKey) {
	if len(keys) == 0 {
		delete(s.excluded, region)
	} else {
		if s.excluded == nil {
			s.excluded = map[string][]app.ResourceKey{}
		}
		s.excluded[region] = keys
	}
	var msgs []string
	for _, r := range workflow.DeterministicKeys(s.excluded) {
		for _, k := range s.excluded[r] {
			msgs = append(msgs, excludedMessage(k))
		}
	}
	slices.Sort(msgs)
	msgs = slices.Compact(msgs)
	if len(msgs) == 0 && !slices.ContainsFunc(s.Status.Conditions, func(c app.Condition) bool { return c.Type == conditionExcludedResource }) {
		return
	}
	var kept []app.Condition
	for _, c := range s.Status.Conditions {
		if c.Type != conditionExcludedResource {
			kept = append(kept, c)
		} else if i := slices.Index(msgs, c.Message); i >= 0 {
			// Standing: kept as it is, in its place.
			kept = append(kept, c)
			msgs = slices.Delete(msgs, i, i+1)
		}
	}
	for _, m := range msgs {
		kept = append(kept, app.Condition{Type: conditionExcludedResource, Message: m})
	}
	s.Status.Conditions = kept
}
