package render

import (
	"fmt"
	"path"
	"slices"

	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/internal/app"
)

// kustomizeEdits is what editKustomization needs beyond the file: Argo
// CD's build environment (commonAnnotationsEnvsubst) and whether a path
// relative to the app directory exists (ignoreMissingComponents).
type kustomizeEdits struct {
	env    map[string]string
	exists func(rel string) bool
}

// addLabelsWithoutSelector adds labels as a labels entry that leaves
// selectors alone, as kustomize edit add label --without-selector
// [--include-templates] does.
func addLabelsWithoutSelector(doc *kyaml.RNode, file string, k *app.KustomizeSource) error {
	if len(k.CommonLabels) == 0 {
		return nil
	}
	seq, err := doc.Pipe(kyaml.LookupCreate(kyaml.SequenceNode, "labels"))
	if err != nil {
		return &ManifestError{File: file, Err: fmt.Errorf("labels: %w", err)}
	}
	entry := kyaml.NewMapRNode(nil)
	if k.LabelIncludeTemplates {
		if err := entry.PipeE(kyaml.SetField("includeTemplates", kyaml.NewScalarRNode("true"))); err != nil {
			return err
		}
	}
	if err := addToMap(entry, file, "pairs", "spec.source.kustomize.commonLabels", k.CommonLabels, true); err != nil {
		return err
	}
	return seq.PipeE(kyaml.Append(entry.YNode()))
}

// setReplicas updates the replicas entry of each name or adds one
// (kustomize edit set replicas).
func setReplicas(doc *kyaml.RNode, file string, replicas []app.KustomizeReplica) error {
	if len(replicas) == 0 {
		return nil
	}
	seq, err := doc.Pipe(kyaml.LookupCreate(kyaml.SequenceNode, "replicas"))
	if err != nil {
		return &ManifestError{File: file, Err: fmt.Errorf("replicas: %w", err)}
	}
	for i, r := range replicas {
		n, err := r.ReplicaCount()
		if err != nil {
			return &SourceError{Path: file, Msg: fmt.Sprintf("spec.source.kustomize.replicas[%d].count: %v", i, err)}
		}
		entry, err := seq.Pipe(kyaml.ElementMatcher{Keys: []string{"name"}, Values: []string{r.Name}})
		if err != nil {
			return &ManifestError{File: file, Err: fmt.Errorf("replicas: %w", err)}
		}
		if entry == nil {
			entry = kyaml.NewMapRNode(nil)
			if err := entry.PipeE(kyaml.SetField("name", kyaml.NewStringRNode(r.Name))); err != nil {
				return err
			}
			if err := seq.PipeE(kyaml.Append(entry.YNode())); err != nil {
				return err
			}
		}
		if err := entry.PipeE(kyaml.SetField("count", kyaml.NewScalarRNode(fmt.Sprint(n)))); err != nil {
			return err
		}
	}
	return nil
}

// addComponents adds each component the kustomization does not list yet
// (kustomize edit add component); with ignoreMissingComponents, one whose
// directory does not exist is left out, as Argo CD does.
func addComponents(doc *kyaml.RNode, file string, k *app.KustomizeSource, e kustomizeEdits) error {
	var add []string
	for _, c := range k.Components {
		if k.IgnoreMissingComponents && e.exists != nil && !e.exists(path.Clean(c)) {
			continue
		}
		add = append(add, c)
	}
	if len(add) == 0 {
		return nil
	}
	seq, err := doc.Pipe(kyaml.LookupCreate(kyaml.SequenceNode, "components"))
	if err != nil {
		return &ManifestError{File: file, Err: fmt.Errorf("components: %w", err)}
	}
	var have []string
	elems, _ := seq.Elements()
	for _, el := range elems {
		have = append(have, el.YNode().Value)
	}
	for _, c := range add {
		if slices.Contains(have, c) {
			continue
		}
		if err := seq.PipeE(kyaml.Append(kyaml.NewStringRNode(c).YNode())); err != nil {
			return err
		}
	}
	return nil
}

// addPatches appends spec.source.kustomize.patches to the kustomization's
// patches, as Argo CD writes them into it before the build.
func addPatches(doc *kyaml.RNode, file string, patches []app.KustomizePatch) error {
	if len(patches) == 0 {
		return nil
	}
	seq, err := doc.Pipe(kyaml.LookupCreate(kyaml.SequenceNode, "patches"))
	if err != nil {
		return &ManifestError{File: file, Err: fmt.Errorf("patches: %w", err)}
	}
	for i, p := range patches {
		data, err := yaml.Marshal(p)
		if err != nil {
			return fmt.Errorf("spec.source.kustomize.patches[%d]: %w", i, err)
		}
		node, err := kyaml.Parse(string(data))
		if err != nil {
			return fmt.Errorf("spec.source.kustomize.patches[%d]: %w", i, err)
		}
		if err := seq.PipeE(kyaml.Append(node.YNode())); err != nil {
			return err
		}
	}
	return nil
}
