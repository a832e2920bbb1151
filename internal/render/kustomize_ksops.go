package render

import (
	"fmt"
	"path/filepath"
	"strings"

	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"
)

// KSOPS (viaduct.ai's kustomize-sops) is the generator Argo CD users list
// to decrypt SOPS files in a kustomization:
//
//	# kustomization.yaml
//	generators:
//	  - secret-generator.yaml
//	# secret-generator.yaml
//	apiVersion: viaduct.ai/v1
//	kind: ksops
//	metadata:
//	  name: secret-generator
//	files:
//	  - ./secret.enc.yaml
//
// Kustomize runs it as an exec or KRM-function plugin, which Ferry's
// kustomize does not run (built-in plugins only). Ferry gives the same
// output without it: the generator's entry moves to resources, and the
// generator file reads as the decrypted files it lists, one stream
// (repoFS overrides; the checkout is not written). The files are read
// as kustomize reads any file, confined to the repository, and decrypted
// with the worker's age identities (repoFS.decrypt).

// ksopsConfig is the part of a KSOPS generator Ferry renders.
type ksopsConfig struct {
	Kind  string   `json:"kind"`
	Files []string `json:"files"`
	// SecretFrom (KSOPS v4) builds a Secret from encrypted files, as a
	// secretGenerator does: not rendered.
	SecretFrom []any `json:"secretFrom"`
}

// ksopsEntry is a generators entry naming a KSOPS generator file.
type ksopsEntry struct {
	entry string // as written in the kustomization
	file  string // real path of the generator file
}

// isKSOPS tells whether a generator file is a KSOPS generator.
func isKSOPS(data []byte) bool {
	for _, doc := range splitYAML(data) {
		var cfg ksopsConfig
		if yaml.Unmarshal(doc.data, &cfg) == nil && strings.EqualFold(cfg.Kind, "ksops") {
			return true
		}
	}
	return false
}

// ksops notes a KSOPS generator of the kustomization in dir.
func (s *kustScan) ksops(dir, entry, file string) {
	if s.ksopsGens == nil {
		s.ksopsGens = map[string][]ksopsEntry{}
	}
	s.ksopsGens[dir] = append(s.ksopsGens[dir], ksopsEntry{entry: entry, file: file})
}

// applyKSOPS replaces every KSOPS generator noted by the files it lists,
// decrypted, among the kustomization's resources.
func (s *kustScan) applyKSOPS() error {
	for dir, gens := range s.ksopsGens {
		entries := map[string]bool{}
		for _, g := range gens {
			if err := s.ksopsOutput(dir, g.file); err != nil {
				return err
			}
			entries[g.entry] = true
		}
		err := s.editKustomization(dir, func(display string, data []byte) ([]byte, error) {
			return moveToResources(display, data, entries)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// ksopsOutput makes the generator file read as the files it lists
// (relative to the kustomization's directory, where kustomize runs its
// plugins), decrypted.
func (s *kustScan) ksopsOutput(dir, file string) error {
	display := s.fs.display(file)
	data, err := s.fs.ReadFile(file)
	if err != nil {
		return err
	}
	var out []string
	for _, doc := range splitYAML(data) {
		var cfg ksopsConfig
		if err := yaml.Unmarshal(doc.data, &cfg); err != nil {
			return yamlError(display, doc, err)
		}
		if !strings.EqualFold(cfg.Kind, "ksops") {
			continue
		}
		if len(cfg.SecretFrom) > 0 {
			return &UnsupportedError{Path: display, What: "KSOPS secretFrom", Verb: "is not rendered",
				Reason: "list the encrypted Secret manifests under files instead, each a whole Secret encrypted with sops"}
		}
		if len(cfg.Files) == 0 {
			return &SourceError{Path: display, Msg: "KSOPS generator: files is empty: list the SOPS-encrypted manifests to generate, relative to the kustomization"}
		}
		for i, f := range cfg.Files {
			if isHTTP(f) || filepath.IsAbs(f) {
				return &SourceError{Path: display, Msg: fmt.Sprintf("KSOPS generator: files[%d] %q: name a file in the repository, relative to the kustomization", i, f)}
			}
			content, err := s.fs.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
			if err != nil {
				if lim := s.fs.limit(); lim != nil {
					return lim
				}
				return &SourceError{Path: display, Msg: fmt.Sprintf("KSOPS generator: files[%d] %q: %v", i, f, err), Err: err}
			}
			out = append(out, string(content))
		}
	}
	real, err := s.fs.confine(file)
	if err != nil {
		return err
	}
	s.fs.override(real, []byte(strings.Join(out, "\n---\n")))
	return nil
}

// moveToResources moves the generators entries of a kustomization that
// entries holds to the end of its resources (field names in any case, as
// kustomize reads them).
func moveToResources(display string, data []byte, entries map[string]bool) ([]byte, error) {
	doc, err := kyaml.Parse(string(data))
	if err != nil {
		return nil, yamlError(display, yamlDoc{index: 1, line: 1}, err)
	}
	var moved []*kyaml.Node
	var resources *kyaml.Node
	fields := doc.YNode().Content
	for i := 0; i+1 < len(fields); i += 2 {
		switch strings.ToLower(fields[i].Value) {
		case "generators":
			var kept []*kyaml.Node
			for _, item := range fields[i+1].Content {
				if item.Kind == kyaml.ScalarNode && entries[item.Value] {
					moved = append(moved, item)
					continue
				}
				kept = append(kept, item)
			}
			fields[i+1].Content = kept
		case "resources":
			resources = fields[i+1]
		}
	}
	if resources == nil {
		resources = &kyaml.Node{Kind: kyaml.SequenceNode, Tag: kyaml.NodeTagSeq}
		doc.YNode().Content = append(doc.YNode().Content, &kyaml.Node{Kind: kyaml.ScalarNode, Value: "resources", Tag: kyaml.NodeTagString}, resources)
	}
	resources.Style = 0
	resources.Content = append(resources.Content, moved...)
	out, err := doc.String()
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", display, err)
	}
	return []byte(out), nil
}
