package appset

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/diff"
)

// ignoreRules compiles spec.ignoreApplicationDifferences as the
// ignoreDifferences of the Applications the set generates: each entry's
// jsonPointers and jqPathExpressions apply to the app it names (or every
// app without a name), as in Argo CD.
func ignoreRules(entries []ApplicationMatchExpression) (*diff.Rules, error) {
	var rules []app.IgnoreDifference
	for _, e := range entries {
		rules = append(rules, app.IgnoreDifference{Group: "argoproj.io", Kind: app.Kind, Name: e.Name,
			JSONPointers: e.JSONPointers, JQPathExpressions: e.JQPathExpressions})
	}
	return diff.Compile(rules)
}

// KeepIgnored is the generated app gen as a set applies it over live: the
// fields its spec.ignoreApplicationDifferences (entries) names keep live's
// values (or stay absent where live has none), so that a user or a tool
// may change them, as Argo CD's controller leaves them.
func KeepIgnored(entries []ApplicationMatchExpression, live, gen *app.Application) (*app.Application, error) {
	if len(entries) == 0 {
		return gen, nil
	}
	rules, err := ignoreRules(entries)
	if err != nil {
		return nil, fmt.Errorf("spec.ignoreApplicationDifferences: %w", err)
	}
	liveObj, err := toObject(live)
	if err != nil {
		return nil, err
	}
	genObj, err := toObject(gen)
	if err != nil {
		return nil, err
	}
	rules.Respect(&unstructured.Unstructured{Object: liveObj}, genObj)
	data, err := json.Marshal(genObj)
	if err != nil {
		return nil, err
	}
	var out app.Application
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("app %q with the ignored differences kept: %w", gen.Metadata.Name, err)
	}
	return &out, nil
}

func toObject(a *app.Application) (map[string]any, error) {
	data, err := json.Marshal(a)
	if err != nil {
		return nil, err
	}
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, err
	}
	// The identity the rules match on, whatever the app carries.
	obj["apiVersion"], obj["kind"] = app.APIVersion, app.Kind
	return obj, nil
}
