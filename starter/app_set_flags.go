package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ferry-gitops/ferry/internal/app"
)

// setFlags are argocd app set's flags that change a source, the
// destination, the Helm parameters, the kustomize images and the sync
// policy. Each flag changes only when given; which ones were given is the
// flag set's (pflag.FlagSet.Visit).
type setFlags struct {
	sourcePosition int

	repo, path, revision, chart, ref                   string
	destServer, destName, destNamespace, project       string
	revisionHistoryLimit                               int64
	valueFiles, helmSets, helmSetStrings, helmSetFiles []string
	valuesLiteralFile, releaseName, helmNamespace      string
	helmVersion, helmKubeVersion                       string
	helmSkipCrds, helmSkipTests, helmSkipSchema        bool
	ignoreMissingValueFiles, helmPassCredentials       bool
	kustomizeImages, kustomizeReplicas                 []string
	kustomizeLabels, kustomizeAnnotations              []string
	namePrefix, nameSuffix, kustomizeNS, kustomizeVer  string
	directoryRecurse                                   bool
	directoryInclude, directoryExclude                 string
	syncPolicy                                         string
	syncOptions                                        []string
	autoPrune, selfHeal, allowEmpty                    bool
	retryLimit, retryFactor                            int64
	retryDuration, retryMaxDuration                    time.Duration
}

func (f *setFlags) register(fl *pflag.FlagSet) {
	fl.IntVar(&f.sourcePosition, "source-position", 0, "the source to change of a multi-source app, 1 for the first of spec.sources")
	fl.StringVar(&f.repo, "repo", "", "repository URL (repoURL)")
	fl.StringVar(&f.path, "path", "", "path of the app's directory in the repository")
	fl.StringVar(&f.revision, "revision", "", "branch, tag, commit or chart version the app tracks (targetRevision)")
	fl.StringVar(&f.chart, "helm-chart", "", "chart name of a Helm repository or OCI registry (chart)")
	fl.StringVar(&f.ref, "ref", "", "name of the source for the other sources' value files (ref; multi-source)")
	fl.StringVar(&f.destServer, "dest-server", "", "destination cluster URL: Argo CD's in-cluster address, the in-cluster region (clears --dest-name)")
	fl.StringVar(&f.destName, "dest-name", "", "destination region (destination.name; clears --dest-server)")
	fl.StringVar(&f.destNamespace, "dest-namespace", "", "destination namespace (of every spec.destinations entry of a fan-out app)")
	fl.StringVar(&f.project, "project", "", "the app's AppProject")
	fl.Int64Var(&f.revisionHistoryLimit, "revision-history-limit", 10, "how many deployments status.history keeps")
	fl.StringArrayVar(&f.valueFiles, "values", nil, "Helm value files, replacing valueFiles; repeatable")
	fl.StringVar(&f.valuesLiteralFile, "values-literal-file", "", "a local file whose content becomes helm.values")
	fl.StringVar(&f.releaseName, "release-name", "", "Helm release name")
	fl.StringVar(&f.helmNamespace, "helm-namespace", "", "Helm's .Release.Namespace (helm.namespace)")
	fl.StringVar(&f.helmVersion, "helm-version", "", "Helm major version (v3, the only one)")
	fl.StringVar(&f.helmKubeVersion, "helm-kube-version", "", "Kubernetes version the chart is rendered for (helm.kubeVersion)")
	fl.StringArrayVar(&f.helmSets, "helm-set", nil, "set a Helm parameter, key=value, replacing one of the same key; repeatable")
	fl.StringArrayVar(&f.helmSetStrings, "helm-set-string", nil, "set a Helm parameter as a string, key=value; repeatable")
	fl.StringArrayVar(&f.helmSetFiles, "helm-set-file", nil, "set a Helm value to a file of the repository, key=path; repeatable")
	fl.BoolVar(&f.helmSkipCrds, "helm-skip-crds", false, "leave the chart's crds/ out (helm.skipCrds)")
	fl.BoolVar(&f.helmSkipTests, "helm-skip-tests", false, "helm.skipTests (Ferry never renders test hooks)")
	fl.BoolVar(&f.helmSkipSchema, "helm-skip-schema-validation", false, "skip values.schema.json (helm.skipSchemaValidation)")
	fl.BoolVar(&f.ignoreMissingValueFiles, "ignore-missing-value-files", false, "skip value files that do not exist")
	fl.BoolVar(&f.helmPassCredentials, "helm-pass-credentials", false, "send the repository's credentials to every domain its charts come from")
	fl.StringArrayVar(&f.kustomizeImages, "kustomize-image", nil, "kustomize image override, e.g. nginx:1.27 or nginx=registry/nginx@sha256:…, replacing one of the same image; repeatable")
	fl.StringArrayVar(&f.kustomizeReplicas, "kustomize-replica", nil, "kustomize replica count, name=count, replacing one of the same name; repeatable")
	fl.StringArrayVar(&f.kustomizeLabels, "kustomize-common-label", nil, "kustomize common labels, key=value, replacing commonLabels; repeatable")
	fl.StringArrayVar(&f.kustomizeAnnotations, "kustomize-common-annotation", nil, "kustomize common annotations, key=value, replacing commonAnnotations; repeatable")
	fl.StringVar(&f.namePrefix, "nameprefix", "", "kustomize name prefix")
	fl.StringVar(&f.nameSuffix, "namesuffix", "", "kustomize name suffix")
	fl.StringVar(&f.kustomizeNS, "kustomize-namespace", "", "kustomize namespace")
	fl.StringVar(&f.kustomizeVer, "kustomize-version", "", "kustomize version (Ferry renders with its own)")
	fl.BoolVar(&f.directoryRecurse, "directory-recurse", false, "read the directory's subdirectories too")
	fl.StringVar(&f.directoryInclude, "directory-include", "", "glob of the directory's files to read")
	fl.StringVar(&f.directoryExclude, "directory-exclude", "", "glob of the directory's files to leave out")
	fl.StringVar(&f.syncPolicy, "sync-policy", "", "automated (or auto, automatic) or none")
	fl.StringArrayVar(&f.syncOptions, "sync-option", nil, "add a sync option, e.g. CreateNamespace=true; !Option removes one; repeatable")
	fl.BoolVar(&f.autoPrune, "auto-prune", false, "automated syncs prune (with automated sync)")
	fl.BoolVar(&f.selfHeal, "self-heal", false, "automated syncs undo changes made in the cluster (with automated sync)")
	fl.BoolVar(&f.allowEmpty, "allow-empty", false, "automated syncs may prune every resource (with automated sync)")
	fl.Int64Var(&f.retryLimit, "retry-limit", 0, "retry a failed sync this many times (-1: for ever; 0: no retry)")
	fl.DurationVar(&f.retryDuration, "retry-backoff-duration", 5*time.Second, "the first retry's delay")
	fl.DurationVar(&f.retryMaxDuration, "retry-backoff-max-duration", 3*time.Minute, "the longest delay between retries")
	fl.Int64Var(&f.retryFactor, "retry-backoff-factor", app.DefaultBackoffFactor, "the delay is multiplied by this after each retry")
	refuseArgoFlags(fl, setUnsupported)
}

// setUnsupported are argocd app set's flags that Ferry does not take, each
// with what to do instead.
var setUnsupported = map[string]string{
	"config-management-plugin": "set spec.source.plugin with ferry app patch or edit",
	"plugin-env":               "set spec.source.plugin.env with ferry app patch or edit",
	"jsonnet-tla-str":          "set spec.source.directory.jsonnet with ferry app patch or edit",
	"jsonnet-tla-code":         "set spec.source.directory.jsonnet with ferry app patch or edit",
	"jsonnet-ext-var-str":      "set spec.source.directory.jsonnet with ferry app patch or edit",
	"jsonnet-ext-var-code":     "set spec.source.directory.jsonnet with ferry app patch or edit",
	"jsonnet-libs":             "set spec.source.directory.jsonnet with ferry app patch or edit",
	"validate":                 "Ferry always validates the spec as ferry app apply does: drop it",
	"sync-retry-refresh":       "set spec.syncPolicy.retry.refresh with ferry app patch or edit",
	"source-name":              "give the source's --source-position (ferry app get NAME shows them in order)",
	"annotations":              "set metadata.annotations with ferry app patch or edit",
	"label":                    "set metadata.labels with ferry app patch or edit",
}

// apply changes a as the given flags say, and names every bad flag at
// once; a is left half-changed on error and must be dropped.
func (f *setFlags) apply(fl *pflag.FlagSet, a *app.Application) error {
	errs := refused(fl, setUnsupported)
	if fl.NFlag() == 0 || (fl.NFlag() == 1 && fl.Changed("source-position")) {
		return errors.New("nothing to set: give at least one flag, such as --revision or --helm-set (see ferry app set --help)")
	}
	src, srcErr := a.SourceAt(f.sourcePosition)
	sourceRefused := false
	fl.Visit(func(fv *pflag.Flag) {
		if _, ok := setUnsupported[fv.Name]; ok || !sourceFlag(fv.Name) {
			if err := f.setSpec(fv.Name, a); err != nil {
				errs = append(errs, fmt.Errorf("--%s: %w", fv.Name, err))
			}
			return
		}
		if srcErr != nil {
			if !sourceRefused {
				errs = append(errs, fmt.Errorf("--%s: %w", fv.Name, srcErr))
			}
			sourceRefused = true
			return
		}
		if err := f.setSource(fv.Name, src); err != nil {
			errs = append(errs, fmt.Errorf("--%s: %w", fv.Name, err))
		}
	})
	// After --sync-policy, whatever the order of the flags, as argocd.
	if a.AutomatedSync() {
		au := a.Spec.SyncPolicy.Automated
		for flag, field := range map[string]*bool{"auto-prune": &au.Prune, "self-heal": &au.SelfHeal, "allow-empty": &au.AllowEmpty} {
			if fl.Changed(flag) {
				*field, _ = fl.GetBool(flag)
			}
		}
	} else {
		for _, flag := range []string{"allow-empty", "auto-prune", "self-heal"} {
			if fl.Changed(flag) {
				errs = append(errs, fmt.Errorf("cannot set --%s: the app has no automated sync: add --sync-policy automated", flag))
			}
		}
	}
	if retryBackoff := fl.Changed("retry-backoff-duration") || fl.Changed("retry-backoff-max-duration") || fl.Changed("retry-backoff-factor"); retryBackoff && !fl.Changed("retry-limit") {
		errs = append(errs, errors.New("--retry-backoff-*: give --retry-limit too"))
	}
	if src != nil {
		src.DropEmpty()
	}
	a.Spec.DropEmpty()
	return errors.Join(errs...)
}

// specFlags are the flags of the spec outside its sources.
var specFlags = map[string]bool{"dest-server": true, "dest-name": true, "dest-namespace": true, "project": true,
	"revision-history-limit": true, "sync-policy": true, "sync-option": true, "auto-prune": true, "self-heal": true,
	"allow-empty": true, "retry-limit": true, "retry-backoff-duration": true, "retry-backoff-max-duration": true,
	"retry-backoff-factor": true, "source-position": true}

func sourceFlag(name string) bool { return !specFlags[name] }

// setSpec applies a flag of the spec outside its sources.
func (f *setFlags) setSpec(name string, a *app.Application) error {
	switch name {
	case "dest-server", "dest-name", "dest-namespace":
		return f.setDestination(name, a)
	case "project":
		a.Spec.Project = f.project
	case "revision-history-limit":
		a.Spec.RevisionHistoryLimit = &f.revisionHistoryLimit
	case "sync-policy", "sync-option", "retry-limit":
		return f.setSyncPolicy(name, a)
	}
	return nil
}

// setSource applies a flag of the source.
func (f *setFlags) setSource(name string, src *app.Source) error {
	helm := func() *app.HelmSource {
		if src.Helm == nil {
			src.Helm = &app.HelmSource{}
		}
		return src.Helm
	}
	kustomize := func() *app.KustomizeSource {
		if src.Kustomize == nil {
			src.Kustomize = &app.KustomizeSource{}
		}
		return src.Kustomize
	}
	directory := func() *app.DirectorySource {
		if src.Directory == nil {
			src.Directory = &app.DirectorySource{}
		}
		return src.Directory
	}
	switch name {
	case "repo":
		src.RepoURL = f.repo
	case "path":
		src.Path = f.path
	case "revision":
		src.TargetRevision = f.revision
	case "helm-chart":
		src.Chart = f.chart
	case "ref":
		src.Ref = f.ref
	case "values":
		helm().ValueFiles = f.valueFiles
	case "values-literal-file":
		data, err := os.ReadFile(f.valuesLiteralFile)
		if err != nil {
			return err
		}
		helm().Values = string(data)
	case "release-name":
		helm().ReleaseName = f.releaseName
	case "helm-namespace":
		helm().Namespace = f.helmNamespace
	case "helm-version":
		helm().Version = f.helmVersion
	case "helm-kube-version":
		helm().KubeVersion = f.helmKubeVersion
	case "helm-skip-crds":
		helm().SkipCrds = f.helmSkipCrds
	case "helm-skip-tests":
		helm().SkipTests = f.helmSkipTests
	case "helm-skip-schema-validation":
		helm().SkipSchemaValidation = f.helmSkipSchema
	case "ignore-missing-value-files":
		helm().IgnoreMissingValueFiles = f.ignoreMissingValueFiles
	case "helm-pass-credentials":
		helm().PassCredentials = f.helmPassCredentials
	case "helm-set", "helm-set-string":
		values := f.helmSets
		if name == "helm-set-string" {
			values = f.helmSetStrings
		}
		return eachKeyValue(values, func(k, v string) {
			helm().SetParameter(app.HelmParameter{Name: k, Value: v, ForceString: name == "helm-set-string"})
		})
	case "helm-set-file":
		return eachKeyValue(f.helmSetFiles, func(k, v string) { helm().SetFileParameter(app.HelmFileParameter{Name: k, Path: v}) })
	case "kustomize-image":
		for _, image := range f.kustomizeImages {
			kustomize().SetImage(image)
		}
	case "kustomize-replica":
		return eachKeyValue(f.kustomizeReplicas, func(k, v string) {
			kustomize().SetReplica(app.KustomizeReplica{Name: k, Count: intstr.Parse(v)})
		})
	case "kustomize-common-label", "kustomize-common-annotation":
		values, m := f.kustomizeLabels, map[string]string{}
		if name == "kustomize-common-annotation" {
			values = f.kustomizeAnnotations
		}
		if err := eachKeyValue(values, func(k, v string) { m[k] = v }); err != nil {
			return err
		}
		if name == "kustomize-common-label" {
			kustomize().CommonLabels = m
		} else {
			kustomize().CommonAnnotations = m
		}
	case "nameprefix":
		kustomize().NamePrefix = f.namePrefix
	case "namesuffix":
		kustomize().NameSuffix = f.nameSuffix
	case "kustomize-namespace":
		kustomize().Namespace = f.kustomizeNS
	case "kustomize-version":
		kustomize().Version = f.kustomizeVer
	case "directory-recurse":
		directory().Recurse = f.directoryRecurse
	case "directory-include":
		directory().Include = f.directoryInclude
	case "directory-exclude":
		directory().Exclude = f.directoryExclude
	}
	return nil
}

// setDestination sets the destination; of a fan-out app only the
// namespace, of every entry.
func (f *setFlags) setDestination(name string, a *app.Application) error {
	if len(a.Spec.Destinations) > 0 {
		if name != "dest-namespace" {
			return errors.New("the app fans out to spec.destinations: change its regions with ferry app patch or edit")
		}
		for i := range a.Spec.Destinations {
			a.Spec.Destinations[i].Namespace = f.destNamespace
		}
		return nil
	}
	if a.Spec.Destination == nil {
		a.Spec.Destination = &app.Destination{}
	}
	d := a.Spec.Destination
	switch name {
	case "dest-server":
		d.Server, d.Name = f.destServer, ""
	case "dest-name":
		d.Name, d.Server = f.destName, ""
	case "dest-namespace":
		d.Namespace = f.destNamespace
	}
	return nil
}

// setSyncPolicy applies --sync-policy, --sync-option and --retry-limit;
// apply sets --auto-prune and the like once the policy is known.
func (f *setFlags) setSyncPolicy(name string, a *app.Application) error {
	if a.Spec.SyncPolicy == nil {
		a.Spec.SyncPolicy = &app.SyncPolicy{}
	}
	p := a.Spec.SyncPolicy
	automated := func() *app.Automated {
		if p.Automated == nil {
			p.Automated = &app.Automated{}
		}
		return p.Automated
	}
	switch name {
	case "sync-policy":
		switch f.syncPolicy {
		case "automated", "automatic", "auto":
			automated().Enabled = nil
		case "none", "manual":
			p.Automated = nil
		default:
			return fmt.Errorf("%q: want automated (or auto, automatic) or none", f.syncPolicy)
		}
	case "sync-option":
		for _, o := range f.syncOptions {
			if rest, ok := strings.CutPrefix(o, "!"); ok {
				p.RemoveSyncOption(rest)
			} else {
				p.SetSyncOption(o)
			}
		}
	case "retry-limit":
		if f.retryLimit == 0 {
			p.Retry = nil
			return nil
		}
		factor := f.retryFactor
		p.Retry = &app.RetryPolicy{Limit: f.retryLimit, Backoff: &app.Backoff{
			Duration: f.retryDuration.String(), MaxDuration: f.retryMaxDuration.String(), Factor: &factor}}
	}
	return nil
}

// eachKeyValue calls fn with each key=value of values, and names every
// value that is not one.
func eachKeyValue(values []string, fn func(k, v string)) error {
	var errs []error
	for _, kv := range values {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			errs = append(errs, fmt.Errorf("%s: want key=value", strconv.Quote(kv)))
			continue
		}
		fn(k, v)
	}
	return errors.Join(errs...)
}
