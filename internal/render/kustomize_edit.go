package render

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/ferry-gitops/ferry/internal/app"
)

// kustomizeOptionsSet reports whether k asks for any change to the
// kustomization.
func kustomizeOptionsSet(k *app.KustomizeSource) bool {
	return k != nil && (k.NamePrefix != "" || k.NameSuffix != "" || len(k.Images) > 0 ||
		len(k.CommonLabels) > 0 || len(k.CommonAnnotations) > 0 || k.Namespace != "" ||
		len(k.Replicas) > 0 || len(k.Patches) > 0 || len(k.Components) > 0)
}

// editKustomization applies spec.source.kustomize to the content of a
// kustomization file the way Argo CD does, which is by running kustomize
// edit in the app directory before kustomize build:
//
//   - namePrefix, nameSuffix and namespace replace the file's own
//     ("kustomize edit set nameprefix|namesuffix|namespace");
//   - commonLabels and commonAnnotations are added to the file's; a key
//     the file already sets is an error, as "kustomize edit add label"
//     without --force makes it, unless forceCommonLabels
//     (forceCommonAnnotations) says to replace it; labelWithoutSelector
//     adds the labels as a labels entry that leaves selectors alone;
//     commonAnnotationsEnvsubst expands the build environment in the
//     annotations' values;
//   - replicas, components and patches are added (kustomize edit set
//     replicas, kustomize edit add component, and Argo CD's own write of
//     patches);
//   - each image ("name=newName:tag", "name=newName@digest", "name:tag",
//     "name@digest", "name=newName") updates the images entry of that name,
//     keeping the fields it does not set, or adds one
//     ("kustomize edit set image").
//
// The result is a new document; the file on disk is not touched.
func editKustomization(file string, data []byte, k *app.KustomizeSource, e kustomizeEdits) ([]byte, error) {
	doc, err := kyaml.Parse(string(data))
	if err != nil {
		return nil, yamlError(file, yamlDoc{index: 1, line: 1}, err)
	}
	if doc.YNode().Kind != kyaml.MappingNode {
		return nil, &ManifestError{File: file, Line: 1, Err: fmt.Errorf("a kustomization must be a YAML mapping")}
	}
	for _, s := range []struct{ field, value string }{
		{"namePrefix", k.NamePrefix}, {"nameSuffix", k.NameSuffix}, {"namespace", k.Namespace},
	} {
		if s.value == "" {
			continue
		}
		if err := doc.PipeE(kyaml.SetField(s.field, kyaml.NewStringRNode(s.value))); err != nil {
			return nil, fmt.Errorf("set %s in %s: %w", s.field, file, err)
		}
	}
	annotations := k.CommonAnnotations
	if k.CommonAnnotationsEnvsubst && len(annotations) > 0 {
		annotations = make(map[string]string, len(k.CommonAnnotations))
		for key, val := range k.CommonAnnotations {
			annotations[key] = Envsubst(val, e.env)
		}
	}
	if k.LabelWithoutSelector {
		if err := addLabelsWithoutSelector(doc, file, k); err != nil {
			return nil, err
		}
	} else if err := addToMap(doc, file, "commonLabels", "spec.source.kustomize.commonLabels", k.CommonLabels, k.ForceCommonLabels); err != nil {
		return nil, err
	}
	if err := addToMap(doc, file, "commonAnnotations", "spec.source.kustomize.commonAnnotations", annotations, k.ForceCommonAnnotations); err != nil {
		return nil, err
	}
	if err := setImages(doc, file, k.Images); err != nil {
		return nil, err
	}
	if err := setReplicas(doc, file, k.Replicas); err != nil {
		return nil, err
	}
	if err := addComponents(doc, file, k, e); err != nil {
		return nil, err
	}
	if err := addPatches(doc, file, k.Patches); err != nil {
		return nil, err
	}
	out, err := doc.String()
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", file, err)
	}
	return []byte(out), nil
}

// addToMap adds values to the mapping field of doc; a key it already has
// is an error unless force.
func addToMap(doc *kyaml.RNode, file, field, spec string, values map[string]string, force bool) error {
	if len(values) == 0 {
		return nil
	}
	m, err := doc.Pipe(kyaml.LookupCreate(kyaml.MappingNode, field))
	if err != nil {
		return &ManifestError{File: file, Err: fmt.Errorf("%s: %w", field, err)}
	}
	keys := make([]string, 0, len(values))
	for key := range values {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		if m.Field(key) != nil && !force {
			return &SourceError{Path: file, Msg: fmt.Sprintf("%s[%q] is already set in the kustomization's %s; remove it from one of them, or set %s", spec, key, field, forceField(spec))}
		}
		if err := m.PipeE(kyaml.SetField(key, kyaml.NewStringRNode(values[key]))); err != nil {
			return fmt.Errorf("set %s %q in %s: %w", field, key, file, err)
		}
	}
	return nil
}

// forceField is the option that lets spec replace the kustomization's keys.
func forceField(spec string) string {
	if strings.HasSuffix(spec, "Annotations") {
		return "spec.source.kustomize.forceCommonAnnotations"
	}
	return "spec.source.kustomize.forceCommonLabels"
}

// kustomizeImage is one entry of a kustomization's images.
type kustomizeImage struct {
	Name, NewName, NewTag, Digest string
}

// tagPattern splits "image:tag" at the last colon that starts a tag, so
// that a registry port ("host:5000/app") stays in the name.
var tagPattern = regexp.MustCompile(`^(.*):([a-zA-Z0-9._-]*|\*)$`)

// parseImageOverride reads one spec.source.kustomize.images entry.
func parseImageOverride(s string) (kustomizeImage, error) {
	s = strings.TrimSpace(s)
	if name, repl, ok := strings.Cut(s, "="); ok {
		if name == "" || repl == "" || strings.Contains(repl, "=") {
			return kustomizeImage{}, fmt.Errorf("%q: write name=newName:tag, name=newName@digest, name:tag or name@digest", s)
		}
		img := splitImage(repl)
		img.NewName, img.Name = img.Name, name
		return img, nil
	}
	img := splitImage(s)
	if img.NewTag == "" && img.Digest == "" {
		return kustomizeImage{}, fmt.Errorf("%q sets neither a tag nor a digest: write name:tag, name@digest or name=newName:tag", s)
	}
	return img, nil
}

func splitImage(s string) kustomizeImage {
	if name, digest, ok := strings.Cut(s, "@"); ok {
		return kustomizeImage{Name: name, Digest: digest}
	}
	if m := tagPattern.FindStringSubmatch(s); m != nil && !strings.Contains(m[2], "/") {
		return kustomizeImage{Name: m[1], NewTag: m[2]}
	}
	return kustomizeImage{Name: s}
}

func setImages(doc *kyaml.RNode, file string, specs []string) error {
	if len(specs) == 0 {
		return nil
	}
	seq, err := doc.Pipe(kyaml.LookupCreate(kyaml.SequenceNode, "images"))
	if err != nil {
		return &ManifestError{File: file, Err: fmt.Errorf("images: %w", err)}
	}
	for i, spec := range specs {
		img, err := parseImageOverride(spec)
		if err != nil {
			return &SourceError{Path: file, Msg: fmt.Sprintf("spec.source.kustomize.images[%d] %v", i, err)}
		}
		entry, err := seq.Pipe(kyaml.ElementMatcher{Keys: []string{"name"}, Values: []string{img.Name}})
		if err != nil {
			return &ManifestError{File: file, Err: fmt.Errorf("images: %w", err)}
		}
		if entry == nil {
			entry = kyaml.NewMapRNode(nil)
			if err := entry.PipeE(kyaml.SetField("name", kyaml.NewStringRNode(img.Name))); err != nil {
				return err
			}
			if err := seq.PipeE(kyaml.Append(entry.YNode())); err != nil {
				return err
			}
		}
		for _, f := range []struct{ field, value string }{
			{"newName", img.NewName}, {"newTag", img.NewTag}, {"digest", img.Digest},
		} {
			if f.value == "" || f.value == "*" {
				continue // "*" keeps what the kustomization says
			}
			if err := entry.PipeE(kyaml.SetField(f.field, kyaml.NewStringRNode(f.value))); err != nil {
				return err
			}
		}
		// A new tag replaces a pinned digest and the other way round, or
		// kustomize would write both.
		if img.NewTag != "" && img.NewTag != "*" {
			_ = entry.PipeE(kyaml.Clear("digest"))
		}
		if img.Digest != "" {
			_ = entry.PipeE(kyaml.Clear("newTag"))
		}
	}
	return nil
}
