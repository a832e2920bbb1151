package render

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

// scanKustomization walks the kustomizations reachable from dir before
// kustomize runs, and refuses what Ferry does not let kustomize do:
//
//   - helmCharts, which kustomize inflates by running the helm binary;
//   - unless remote bases are allowed, any reference kustomize would fetch
//     from the network or clone: a Git URL among resources, bases,
//     components, generators, transformers and validators (kustomize's
//     forms: https://, http://, ssh://, file://, git::, user@host:,
//     github.com/...), and an http(s) URL where kustomize reads a file
//     (crds, configurations, patches, replacements, openapi, generator
//     files and env files, and the path fields of transformer configs).
//
// Kustomize itself cannot be told not to fetch, so the check comes first.
// Local paths are left to kustomize and repoFS, which keeps them inside
// the repository.
func (r *Renderer) scanKustomization(fsys *repoFS, dir string) error {
	s := &kustScan{fs: fsys, allowRemote: r.AllowRemoteBases, seen: map[string]bool{}}
	return s.dir(dir)
}

type kustScan struct {
	fs          *repoFS
	allowRemote bool
	seen        map[string]bool
}

// Fields of a kustomization whose entries are kustomizations or resource
// files; kustomize tries each as a file, then as a directory or Git URL.
var kustTargetFields = []string{"resources", "bases", "components", "generators", "transformers", "validators"}

// Fields whose entries kustomize reads as files (or fetches, for http URLs).
var kustFileFields = []string{"crds", "configurations", "patchesStrategicMerge"}

func (s *kustScan) dir(dir string) error {
	real, err := s.fs.confine(dir)
	if err != nil || s.seen[real] {
		return nil // kustomize reports the escape; a cycle, kustomize too
	}
	s.seen[real] = true
	var file string
	var data []byte
	for _, name := range kustomizationFiles {
		p := filepath.Join(real, name)
		if s.fs.Exists(p) {
			if data, err = s.fs.ReadFile(p); err != nil {
				return err
			}
			file = p
			break
		}
	}
	if file == "" {
		return nil
	}
	var k map[string]any
	if err := yaml.Unmarshal(data, &k); err != nil {
		return nil // kustomize names the file and the line
	}
	display := displayPath(s.fs.root, file)
	if _, ok := k["helmCharts"]; ok {
		return &UnsupportedError{Path: display, What: "Kustomize helmCharts", Reason: "inflating a chart runs the helm binary; point an Application of its own at the chart, or commit the inflated manifests"}
	}
	for _, field := range kustTargetFields {
		for _, entry := range stringsOf(k[field]) {
			if isRemoteTarget(entry) || isHTTP(entry) {
				if err := s.remote(display, field, entry); err != nil {
					return err
				}
				continue
			}
			p := filepath.Join(real, filepath.FromSlash(entry))
			switch {
			case s.fs.IsDir(p):
				if err := s.dir(p); err != nil {
					return err
				}
			case field != "resources" && field != "bases" && s.fs.Exists(p):
				if err := s.pluginConfig(p); err != nil {
					return err
				}
			}
		}
	}
	for _, field := range kustFileFields {
		for _, entry := range stringsOf(k[field]) {
			if err := s.file(display, field, entry); err != nil {
				return err
			}
		}
	}
	for _, field := range []string{"patches", "patchesJson6902", "replacements"} {
		for _, item := range listOf(k[field]) {
			if err := s.file(display, field+".path", stringOf(item["path"])); err != nil {
				return err
			}
		}
	}
	if openapi, ok := k["openapi"].(map[string]any); ok {
		if err := s.file(display, "openapi.path", stringOf(openapi["path"])); err != nil {
			return err
		}
	}
	for _, field := range []string{"configMapGenerator", "secretGenerator"} {
		if err := s.generators(display, field, listOf(k[field])); err != nil {
			return err
		}
	}
	return nil
}

// pluginConfig checks a builtin transformer or generator config for file
// paths that are URLs.
func (s *kustScan) pluginConfig(p string) error {
	data, err := s.fs.ReadFile(p)
	if err != nil {
		return nil
	}
	display := displayPath(s.fs.root, p)
	for _, doc := range splitYAML(data) {
		var cfg map[string]any
		if yaml.Unmarshal(doc.data, &cfg) != nil || cfg == nil {
			continue
		}
		entries := append([]string{stringOf(cfg["path"])}, stringsOf(cfg["paths"])...)
		for _, entry := range entries {
			if err := s.file(display, "path", entry); err != nil {
				return err
			}
		}
		for _, item := range listOf(cfg["replacements"]) {
			if err := s.file(display, "replacements.path", stringOf(item["path"])); err != nil {
				return err
			}
		}
		if err := s.generators(display, "generator", []map[string]any{cfg}); err != nil {
			return err
		}
	}
	return nil
}

func (s *kustScan) generators(display, field string, gens []map[string]any) error {
	for _, g := range gens {
		var entries []string
		entries = append(entries, stringsOf(g["files"])...)
		entries = append(entries, stringsOf(g["envs"])...)
		entries = append(entries, stringOf(g["env"]))
		for _, entry := range entries {
			// files entries may be "key=path".
			if _, p, ok := strings.Cut(entry, "="); ok && isHTTP(p) {
				entry = p
			}
			if err := s.file(display, field, entry); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *kustScan) file(display, field, entry string) error {
	if entry == "" || !isHTTP(entry) {
		return nil
	}
	return s.remote(display, field, entry)
}

func (s *kustScan) remote(display, field, entry string) error {
	if s.allowRemote {
		return nil
	}
	return &UnsupportedError{
		Path: display,
		What: fmt.Sprintf("remote references (%s: %q)", field, entry),
		Verb: "are not allowed on this worker",
		Reason: "Ferry renders only what is in the Application's repository; vendor the base into the repository, " +
			"or ask the operator to allow remote Kustomize bases",
	}
}

// isHTTP is kustomize's test for a file it downloads.
func isHTTP(s string) bool {
	l := strings.ToLower(strings.TrimSpace(s))
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

var scpUser = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9-]*@`)

// isRemoteTarget reports whether kustomize could take s for a Git
// repository to clone. It errs on the side of yes: a local path never
// looks like this.
func isRemoteTarget(s string) bool {
	l := strings.ToLower(strings.TrimSpace(s))
	l = strings.TrimPrefix(l, "git::")
	for _, prefix := range []string{"https://", "http://", "ssh://", "file://", "github.com/", "github.com:"} {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return scpUser.MatchString(l)
}

func stringOf(v any) string {
	s, _ := v.(string)
	return s
}

func stringsOf(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, item := range list {
		if s, ok := item.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func listOf(v any) []map[string]any {
	list, _ := v.([]any)
	out := make([]map[string]any, 0, len(list))
	for _, item := range list {
		if m, ok := item.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}
