package main

import (
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/pflag"

	"github.com/ferry-gitops/ferry/internal/app"
)

// unsetFlags are argocd app unset's flags: each removes an override of a
// source.
type unsetFlags struct {
	sourcePosition                               int
	valueFiles, parameters, images, replicas     []string
	valuesLiteral, namePrefix, nameSuffix        bool
	kustomizeNS, kustomizeVersion, ignoreMissing bool
	passCredentials, ref                         bool
}

func (f *unsetFlags) register(fl *pflag.FlagSet) {
	fl.IntVar(&f.sourcePosition, "source-position", 0, "the source to change of a multi-source app, 1 for the first of spec.sources")
	fl.StringArrayVar(&f.valueFiles, "values", nil, "remove this Helm value file; repeatable")
	fl.BoolVar(&f.valuesLiteral, "values-literal", false, "remove helm.values")
	fl.StringArrayVarP(&f.parameters, "parameter", "p", nil, "remove the Helm parameter of this name; repeatable")
	fl.BoolVar(&f.ignoreMissing, "ignore-missing-value-files", false, "unset helm.ignoreMissingValueFiles")
	fl.BoolVar(&f.passCredentials, "pass-credentials", false, "unset helm.passCredentials")
	fl.StringArrayVar(&f.images, "kustomize-image", nil, "remove the kustomize override of this image (nginx); repeatable")
	fl.StringArrayVar(&f.replicas, "kustomize-replica", nil, "remove the kustomize replica count of this name; repeatable")
	fl.BoolVar(&f.namePrefix, "nameprefix", false, "remove the kustomize name prefix")
	fl.BoolVar(&f.nameSuffix, "namesuffix", false, "remove the kustomize name suffix")
	fl.BoolVar(&f.kustomizeNS, "kustomize-namespace", false, "remove the kustomize namespace")
	fl.BoolVar(&f.kustomizeVersion, "kustomize-version", false, "remove the kustomize version")
	fl.BoolVar(&f.ref, "ref", false, "remove the source's ref (multi-source)")
	refuseArgoFlags(fl, unsetUnsupported)
}

// unsetUnsupported are argocd app unset's flags that Ferry does not take.
var unsetUnsupported = map[string]string{
	"plugin-env":           "remove spec.source.plugin.env entries with ferry app patch or edit",
	"jsonnet-tla-str":      "change spec.source.directory.jsonnet with ferry app patch or edit",
	"jsonnet-tla-code":     "change spec.source.directory.jsonnet with ferry app patch or edit",
	"jsonnet-ext-var-str":  "change spec.source.directory.jsonnet with ferry app patch or edit",
	"jsonnet-ext-var-code": "change spec.source.directory.jsonnet with ferry app patch or edit",
	"jsonnet-libs":         "change spec.source.directory.jsonnet with ferry app patch or edit",
	"source-name":          "give the source's --source-position (ferry app get NAME shows them in order)",
}

// apply removes from a what the given flags name. Removing what is not
// there is an error, so that a typo does not pass for a change.
func (f *unsetFlags) apply(fl *pflag.FlagSet, a *app.Application) error {
	errs := refused(fl, unsetUnsupported)
	if fl.NFlag() == 0 || (fl.NFlag() == 1 && fl.Changed("source-position")) {
		return errors.New("nothing to unset: give at least one flag, such as --parameter or --kustomize-image (see ferry app unset --help)")
	}
	src, err := a.SourceAt(f.sourcePosition)
	if err != nil {
		return err
	}
	missing := func(flag, what string) { errs = append(errs, fmt.Errorf("--%s: the source has no %s", flag, what)) }
	h, k := src.Helm, src.Kustomize
	if h == nil {
		h = &app.HelmSource{}
	}
	if k == nil {
		k = &app.KustomizeSource{}
	}
	for _, vf := range f.valueFiles {
		if i := slices.Index(h.ValueFiles, vf); i >= 0 {
			h.ValueFiles = slices.Delete(h.ValueFiles, i, i+1)
		} else {
			missing("values", fmt.Sprintf("value file %q", vf))
		}
	}
	for _, p := range f.parameters {
		if !h.RemoveParameter(p) {
			missing("parameter", fmt.Sprintf("Helm parameter %q", p))
		}
	}
	for _, img := range f.images {
		if !k.RemoveImage(img) {
			missing("kustomize-image", fmt.Sprintf("kustomize image override of %q", app.KustomizeImageName(img)))
		}
	}
	for _, r := range f.replicas {
		if !k.RemoveReplica(r) {
			missing("kustomize-replica", fmt.Sprintf("kustomize replica count of %q", r))
		}
	}
	unset := func(on bool, field *string) {
		if on {
			*field = ""
		}
	}
	unset(f.valuesLiteral, &h.Values)
	unset(f.namePrefix, &k.NamePrefix)
	unset(f.nameSuffix, &k.NameSuffix)
	unset(f.kustomizeNS, &k.Namespace)
	unset(f.kustomizeVersion, &k.Version)
	unset(f.ref, &src.Ref)
	if f.valuesLiteral {
		h.ValuesObject = nil // argocd's --values-literal removes both forms
	}
	if f.ignoreMissing {
		h.IgnoreMissingValueFiles = false
	}
	if f.passCredentials {
		h.PassCredentials = false
	}
	src.Helm, src.Kustomize = h, k
	src.DropEmpty()
	return errors.Join(errs...)
}
