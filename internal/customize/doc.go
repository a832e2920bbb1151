// Package customize reads Argo CD's resource customizations — the
// resource.customizations.* keys of its argocd-cm ConfigMap — and runs their
// Lua health checks and actions, so that a team's existing configuration
// teaches Ferry the health of its custom resources.
//
// Keys read from the ConfigMap's data, as Argo CD documents them:
//
//	resource.customizations.health.<group>_<kind>   a Lua health script
//	resource.customizations.actions.<group>_<kind>  discovery.lua and definitions[].action.lua
//	resource.customizations.ignoreDifferences.<group>_<kind>  (and .all)
//	resource.customizations                         the older form: one YAML map of group/kind
//	resource.exclusions, resource.inclusions        which kinds Ferry leaves alone
//
// A core-group kind is written without group and underscore
// (resource.customizations.health.Service); group and kind may hold * and
// other path.Match wildcards (resource.customizations.health.*.crossplane.io_*).
// Every other data key of argocd-cm is Argo CD's own and is not read.
//
// Scripts run as Argo CD runs them, in github.com/yuin/gopher-lua with only
// the base, table, string and math libraries and a safe part of os (time,
// date, clock, difftime): no io, no files, no environment, no print, no
// require. Each run has its own interpreter and a one-second limit. Argo
// CD's useOpenLibs opt-in is refused: a script never reaches the worker's
// files or environment.
//
//	set, err := customize.Parse(configMapYAML)
//	if code, msg, ok := set.Health(live); ok { ... }
package customize
