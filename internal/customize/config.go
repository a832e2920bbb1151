package customize

import (
	"errors"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/gobwas/glob"
	lua "github.com/yuin/gopher-lua"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/internal/app"
)

const (
	prefix        = "resource.customizations"
	exclusionsKey = "resource.exclusions"
	inclusionsKey = "resource.inclusions"
	allKinds      = "*/*"
)

// Set is what one argocd-cm says about resources. The zero Set (and a nil
// one) customizes nothing.
type Set struct {
	overrides  map[string]*override // by group/kind key, which may hold wildcards
	exclusions []Filter
	inclusions []Filter
	// KustomizeBuildOptions is kustomize.buildOptions, the flags of
	// kustomize build (render.ParseKustomizeBuildOptions reads them).
	KustomizeBuildOptions string
}

// override is what the ConfigMap says about one group/kind key.
type override struct {
	key     string
	health  *lua.FunctionProto
	actions *actionSet
	ignore  app.IgnoreDifference
}

// Filter is one entry of resource.exclusions or resource.inclusions. An
// empty list matches everything; entries may hold wildcards.
type Filter struct {
	APIGroups []string `json:"apiGroups,omitempty"`
	Kinds     []string `json:"kinds,omitempty"`
	Clusters  []string `json:"clusters,omitempty"`
}

// legacyEntry is one group/kind of the older resource.customizations key.
type legacyEntry struct {
	HealthLua             string           `json:"health.lua,omitempty"`
	UseOpenLibs           bool             `json:"health.lua.useOpenLibs,omitempty"`
	Actions               string           `json:"actions,omitempty"`
	IgnoreDifferences     string           `json:"ignoreDifferences,omitempty"`
	IgnoreResourceUpdates string           `json:"ignoreResourceUpdates,omitempty"`
	KnownTypeFields       []map[string]any `json:"knownTypeFields,omitempty"`
}

// Parse reads an argocd-cm ConfigMap manifest. It names every problem of
// the file at once, each with its data key.
func Parse(manifest []byte) (*Set, error) {
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict(manifest, &cm); err != nil {
		return nil, fmt.Errorf("resource customizations: not a ConfigMap manifest: %w", err)
	}
	if cm.Kind != "ConfigMap" {
		return nil, fmt.Errorf("resource customizations: kind is %q; give the argocd-cm ConfigMap manifest", cm.Kind)
	}
	return FromData(cm.Data)
}

// Flag is the option of ferry-worker and ferry that names the file
// ParseFile reads.
const Flag = "--resource-customizations"

// ParseFile reads the argocd-cm manifest at file (given with Flag); nil
// when file is "". Its errors name the flag and the file.
func ParseFile(file string) (*Set, error) {
	if file == "" {
		return nil, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Flag, err)
	}
	set, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", Flag, file, err)
	}
	return set, nil
}

// FromData reads the data of an argocd-cm ConfigMap.
func FromData(data map[string]string) (*Set, error) {
	s := &Set{overrides: map[string]*override{}}
	var errs []error
	fail := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("argocd-cm data[%q]: %s", key, fmt.Sprintf(format, args...)))
	}
	for _, key := range sortedKeys(data) {
		value := data[key]
		switch {
		case key == prefix:
			s.readLegacy(key, value, fail)
		case strings.HasPrefix(key, prefix+"."):
			s.readSplitKey(key, value, fail)
		case key == exclusionsKey:
			if err := yaml.UnmarshalStrict([]byte(value), &s.exclusions); err != nil {
				fail(key, "not a list of {apiGroups, kinds, clusters}: %v", err)
			}
		case key == "kustomize.buildOptions":
			s.KustomizeBuildOptions = value
		case key == inclusionsKey:
			if err := yaml.UnmarshalStrict([]byte(value), &s.inclusions); err != nil {
				fail(key, "not a list of {apiGroups, kinds, clusters}: %v", err)
			}
		}
	}
	for _, l := range []struct {
		key  string
		list []Filter
	}{{exclusionsKey, s.exclusions}, {inclusionsKey, s.inclusions}} {
		key := l.key
		for i, f := range l.list {
			for _, p := range append(append(append([]string{}, f.APIGroups...), f.Kinds...), f.Clusters...) {
				if _, err := glob.Compile(p); err != nil {
					fail(key, "entry %d: pattern %q is not a glob: %v", i, p, err)
				}
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return s, nil
}

// readSplitKey reads resource.customizations.<type>.<group_kind>.
func (s *Set) readSplitKey(key, value string, fail func(string, string, ...any)) {
	rest := strings.TrimPrefix(key, prefix+".")
	kind, groupKind, found := strings.Cut(rest, ".")
	if !found || groupKind == "" {
		fail(key, "want resource.customizations.<health|actions|ignoreDifferences>.<group>_<kind>")
		return
	}
	gk, err := overrideKey(groupKind)
	if err != nil {
		fail(key, "%v", err)
		return
	}
	o := s.entry(gk)
	switch kind {
	case "health":
		o.health = compile(key, value, fail)
	case "actions":
		o.actions = parseActions(key, value, fail)
	case "ignoreDifferences":
		o.ignore = parseIgnore(key, value, fail)
	case "useOpenLibs":
		if strings.TrimSpace(value) == "true" {
			fail(key, "Ferry runs Lua scripts without the os and io libraries; remove useOpenLibs and keep the script to base, table, string, math and os.time/date/clock")
		}
	case "ignoreResourceUpdates", "knownTypeFields":
		// Argo CD tunes its informers and diffing of typed fields with
		// these; Ferry's compare needs neither, so they change nothing.
	default:
		fail(key, "customization %q is not one Argo CD defines (health, actions, ignoreDifferences, ignoreResourceUpdates, knownTypeFields, useOpenLibs)", kind)
	}
}

// readLegacy reads the older single key: a YAML map of group/kind to its
// health.lua, actions and ignoreDifferences.
func (s *Set) readLegacy(key, value string, fail func(string, string, ...any)) {
	var entries map[string]legacyEntry
	if err := yaml.UnmarshalStrict([]byte(value), &entries); err != nil {
		fail(key, "not a map of group/kind to health.lua, actions and ignoreDifferences: %v", err)
		return
	}
	for _, gk := range sortedKeys(entries) {
		e := entries[gk]
		where := key + " " + gk
		o := s.entry(gk)
		if e.HealthLua != "" {
			o.health = compile(where+" health.lua", e.HealthLua, fail)
		}
		if e.Actions != "" {
			o.actions = parseActions(where+" actions", e.Actions, fail)
		}
		if e.IgnoreDifferences != "" {
			o.ignore = parseIgnore(where+" ignoreDifferences", e.IgnoreDifferences, fail)
		}
		if e.UseOpenLibs {
			fail(where, "Ferry runs Lua scripts without the os and io libraries; remove health.lua.useOpenLibs")
		}
	}
}

func (s *Set) entry(key string) *override {
	if o, ok := s.overrides[key]; ok {
		return o
	}
	o := &override{key: key}
	s.overrides[key] = o
	return o
}

// overrideKey turns <group>_<kind> (or <kind> of the core group, or all)
// into Argo CD's group/kind key.
func overrideKey(groupKind string) (string, error) {
	if groupKind == "all" {
		return allKinds, nil
	}
	parts := strings.Split(groupKind, "_")
	var key string
	switch {
	case len(parts) == 2 && parts[0] != "" && parts[1] != "":
		key = parts[0] + "/" + parts[1]
	case len(parts) == 1 && groupKind != "":
		key = groupKind
	default:
		return "", fmt.Errorf("%q is not <group>_<kind>, <kind> or all", groupKind)
	}
	if _, err := path.Match(key, ""); err != nil {
		return "", fmt.Errorf("%q: %v", groupKind, err)
	}
	return key, nil
}

func parseIgnore(key, value string, fail func(string, string, ...any)) app.IgnoreDifference {
	var id app.IgnoreDifference
	if err := yaml.UnmarshalStrict([]byte(value), &id); err != nil {
		fail(key, "not {jsonPointers, jqPathExpressions, managedFieldsManagers}: %v", err)
	}
	return id
}

// lookup returns the override for group/kind: the exact key first, then
// the first wildcard key that matches in sorted order, as Argo CD does.
func (s *Set) lookup(group, kind string, want func(*override) bool) *override {
	if s == nil {
		return nil
	}
	key := kind
	if group != "" {
		key = group + "/" + kind
	}
	if o, ok := s.overrides[key]; ok && want(o) {
		return o
	}
	for _, k := range sortedKeys(s.overrides) {
		o := s.overrides[k]
		if !strings.ContainsAny(k, "*?[") || !want(o) {
			continue
		}
		if ok, _ := path.Match(k, key); ok {
			return o
		}
	}
	return nil
}

// IgnoreDifferences returns what the ConfigMap ignores in group/kind's
// diffs: its own key's entry and the .all entry, in that order.
func (s *Set) IgnoreDifferences(group, kind string) []app.IgnoreDifference {
	if s == nil {
		return nil
	}
	var out []app.IgnoreDifference
	if o := s.lookup(group, kind, func(o *override) bool { return !isEmptyIgnore(o.ignore) }); o != nil && o.key != allKinds {
		out = append(out, o.ignore)
	}
	if o, ok := s.overrides[allKinds]; ok && !isEmptyIgnore(o.ignore) {
		out = append(out, o.ignore)
	}
	for i := range out {
		out[i].Group, out[i].Kind = group, kind
	}
	return out
}

// IgnoreAll returns every ignoreDifferences entry of the ConfigMap with its
// group and kind (globs where the key has them, * for .all), to be added to
// each app's own as Argo CD adds its system-level ones.
func (s *Set) IgnoreAll() []app.IgnoreDifference {
	if s == nil {
		return nil
	}
	var out []app.IgnoreDifference
	for _, key := range sortedKeys(s.overrides) {
		id := s.overrides[key].ignore
		if isEmptyIgnore(id) {
			continue
		}
		id.Group, id.Kind = "", key
		if g, k, found := strings.Cut(key, "/"); found {
			id.Group, id.Kind = g, k
		}
		out = append(out, id)
	}
	return out
}

func isEmptyIgnore(id app.IgnoreDifference) bool {
	return len(id.JSONPointers) == 0 && len(id.JQPathExpressions) == 0 && len(id.ManagedFieldsManagers) == 0
}

// HasFilters tells whether the ConfigMap has resource.exclusions or
// resource.inclusions.
func (s *Set) HasFilters() bool { return s != nil && len(s.exclusions)+len(s.inclusions) > 0 }

// Excluded tells whether resources of group/kind in a cluster are left
// alone, as Argo CD's resource filter decides: matched by
// resource.exclusions, or not matched by a non-empty resource.inclusions.
// cluster holds the names the cluster goes by (a region's name, aliases
// and server URL); an entry's clusters match when one of them does.
// Patterns are globs whose * crosses dots and slashes, as Argo CD's.
func (s *Set) Excluded(group, kind string, cluster ...string) bool {
	if s == nil {
		return false
	}
	for _, f := range s.exclusions {
		if f.matches(group, kind, cluster) {
			return true
		}
	}
	if len(s.inclusions) == 0 {
		return false
	}
	for _, f := range s.inclusions {
		if f.matches(group, kind, cluster) {
			return false
		}
	}
	return true
}

func (f Filter) matches(group, kind string, cluster []string) bool {
	if !anyMatch(f.APIGroups, group) || !anyMatch(f.Kinds, kind) {
		return false
	}
	if len(f.Clusters) == 0 {
		return true
	}
	for _, c := range cluster {
		if anyMatch(f.Clusters, c) {
			return true
		}
	}
	return false
}

func anyMatch(patterns []string, s string) bool {
	if len(patterns) == 0 {
		return true
	}
	for _, p := range patterns {
		if g, err := glob.Compile(p); err == nil && g.Match(s) {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
