package render

import (
	"bytes"
	"encoding/base64"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/internal/secretmask"
	"github.com/ferry-gitops/ferry/internal/sopsfile"
)

// A render's errors must not show a Secret's value (see secrets_mask.go).
// secretScan finds the values a render can meet before it fails, in the
// files it renders from, so that they are known even when the render
// fails before any output: Secret documents (data, decoded and as
// written, and stringData), Kustomize secretGenerators (literals, files,
// env files) and patches of Secrets, Helm values that Secret templates
// use or whose names say they are secret; and the delimiters values are
// split at (Kustomize replacements' options.delimiter, a chart's split).
// What the render produced (rendered templates, Kustomize's output) is
// added to it by the render itself (target.produced).
type secretScan struct {
	set   *secretmask.Set
	files fileSystem
	root  string // the repository root, symlinks resolved
	// files and bytes the scan may still read: the render's own limits.
	filesLeft int
	bytesLeft int64
	maxFile   int64
	// valuePaths are the .Values paths Secret templates read; chartValues
	// the values.yaml files met.
	valuePaths  [][]string
	chartValues []map[string]any
	// sops are the identities SOPS-encrypted files open with: every value
	// such a file holds is secret, and the rest of it is scanned in clear.
	sops *sopsfile.Keys
}

// secretKind finds a Secret's kind line in a document or template.
var secretKind = regexp.MustCompile(`(?m)^\s*kind:\s*["']?Secret["']?\s*$`)

// valuesRef is a path into a chart's values in a template: .Values.db.password.
var valuesRef = regexp.MustCompile(`\.Values((?:\.[A-Za-z_][A-Za-z0-9_-]*)+)`)

// templateSplit is a template splitting a value: split "-" x, splitList ":" x.
var templateSplit = regexp.MustCompile(`\b(?:split|splitList|splitn)\s+(?:\d+\s+)?"([^"]+)"`)

// secretName is a Helm value's key that says it holds a secret.
var secretName = regexp.MustCompile(`(?i)pass(word|wd)?|secret|token|api[-_]?key|private[-_]?key|credential|auth|dsn|connection[-_]?string`)

// walk reads every manifest-like file under dir, within the limits left.
func (s *secretScan) walk(dir string) {
	_ = s.files.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || s.filesLeft <= 0 || s.bytesLeft <= 0 {
			return fs.SkipDir
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return fs.SkipDir
			}
			return nil
		}
		name := d.Name()
		ext := filepath.Ext(name)
		if !d.Type().IsRegular() || (ext != ".yaml" && ext != ".yml" && ext != ".json" && ext != ".tpl" && name != "Kustomization") {
			return nil
		}
		data, ok := s.read(p)
		if !ok {
			return nil
		}
		data, values := sopsValues(s.sops, name, data)
		for _, v := range values {
			s.set.Add(v, "a SOPS-encrypted value")
		}
		if strings.Contains(filepath.ToSlash(p), "/templates/") {
			s.template(data)
			return nil
		}
		if name == "values.yaml" {
			var vals map[string]any
			if yaml.Unmarshal(data, &vals) == nil {
				s.chartValues = append(s.chartValues, vals)
			}
		}
		s.text(data, filepath.Dir(p), isKustomization(name))
		return nil
	})
}

// read reads the regular file p, within the limits left.
func (s *secretScan) read(p string) ([]byte, bool) {
	info, err := s.files.Stat(p)
	if err != nil || !info.Mode().IsRegular() || info.Size() > s.maxFile || info.Size() > s.bytesLeft {
		return nil, false
	}
	data, err := s.files.ReadFile(p)
	if err != nil {
		return nil, false
	}
	s.filesLeft--
	s.bytesLeft -= int64(len(data))
	return data, true
}

// readIn reads rel, relative to dir, when it stays inside the repository.
func (s *secretScan) readIn(dir, rel string) ([]byte, bool) {
	p := rel
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, rel)
	}
	real, err := s.files.EvalSymlinks(p)
	if err != nil || !within(s.root, real) {
		return nil, false
	}
	return s.read(real)
}

func isKustomization(name string) bool {
	for _, k := range kustomizationFiles {
		if name == k {
			return true
		}
	}
	return false
}

// template notes what a chart template tells: the values a Secret
// template reads, and what any template splits values at.
func (s *secretScan) template(data []byte) {
	for _, m := range templateSplit.FindAllSubmatch(data, -1) {
		s.set.AddDelimiter(string(m[1]))
	}
	if !secretKind.Match(data) {
		return
	}
	for _, m := range valuesRef.FindAllSubmatch(data, -1) {
		s.valuePaths = append(s.valuePaths, strings.Split(strings.TrimPrefix(string(m[1]), "."), "."))
	}
	s.secretLines(data, "a Secret template")
}

// text reads a YAML or JSON stream: its Secrets, and, for a
// kustomization (by its file name or its kind), what it generates and
// patches. A document that does not parse but is a Secret's gives the
// values of its data lines.
func (s *secretScan) text(data []byte, dir string, kustomization bool) {
	if !bytes.Contains(data, []byte("Secret")) && !bytes.Contains(data, []byte("delimiter")) && !kustomization {
		return
	}
	for _, doc := range splitYAML(data) {
		var v any
		if err := yaml.Unmarshal(doc.data, &v); err != nil {
			if secretKind.Match(doc.data) {
				s.secretLines(doc.data, "a Secret that does not parse")
			}
			continue
		}
		s.doc(v, dir, kustomization)
	}
}

// doc reads one parsed document.
func (s *secretScan) doc(v any, dir string, kustomization bool) {
	s.delimiters(v)
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	kind, _ := m["kind"].(string)
	switch {
	case kind == "Secret":
		s.secret(m)
	case kustomization || kind == "Kustomization" || kind == "Component":
		s.kustomization(m, dir)
	}
}

// secret adds a Secret's data (as written and decoded) and stringData.
func (s *secretScan) secret(m map[string]any) {
	name, _, _ := strings.Cut(strings.TrimSpace(stringAt(m, "metadata", "name")), "\n")
	data, _ := m["data"].(map[string]any)
	for k, v := range data {
		str, ok := v.(string)
		if !ok {
			continue
		}
		origin := "Secret " + name + ", data." + k
		s.set.Add(str, origin)
		compact := strings.Join(strings.Fields(str), "")
		if raw, err := base64.StdEncoding.DecodeString(compact); err == nil {
			s.set.Add(string(raw), origin)
		}
	}
	stringData, _ := m["stringData"].(map[string]any)
	for k, v := range stringData {
		s.leaves(v, "Secret "+name+", stringData."+k)
	}
}

// dataLine is a "key: value" line of a Secret's data.
var dataLine = regexp.MustCompile(`^\s+["']?[-._A-Za-z0-9]+["']?\s*:\s*(.+?)\s*$`)

// secretLines adds the values of the lines under data: and stringData:
// of a Secret that does not parse as YAML (or is a template): quotes
// taken off, template actions left out.
func (s *secretScan) secretLines(data []byte, origin string) {
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "data:") || strings.HasPrefix(line, "stringData:"):
			in = true
			_, rest, _ := strings.Cut(line, ":")
			s.flowMap(rest, origin)
		case trimmed != "" && !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "\t"):
			in = false
		case in:
			if m := dataLine.FindStringSubmatch(line); m != nil && !strings.Contains(m[1], "{{") {
				s.set.Add(strings.Trim(m[1], `"'`), origin)
			}
		}
	}
}

// flowMap adds the values of "{a: b, c: d}" written after data:.
func (s *secretScan) flowMap(rest, origin string) {
	rest = strings.Trim(strings.TrimSpace(rest), "{}")
	for _, kv := range strings.Split(rest, ",") {
		if _, v, ok := strings.Cut(kv, ":"); ok && !strings.Contains(v, "{{") {
			s.set.Add(strings.Trim(strings.TrimSpace(v), `"'`), origin)
		}
	}
}

// leaves adds every string under v.
func (s *secretScan) leaves(v any, origin string) {
	switch v := v.(type) {
	case string:
		s.set.Add(v, origin)
	case map[string]any:
		for k, e := range v {
			s.leaves(e, origin+"."+k)
		}
	case []any:
		for _, e := range v {
			s.leaves(e, origin)
		}
	}
}

// delimiters adds every options.delimiter (or any "delimiter" key) of a
// document: Kustomize splits values at it.
func (s *secretScan) delimiters(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if d, ok := e.(string); ok && k == "delimiter" {
				s.set.AddDelimiter(d)
			}
			s.delimiters(e)
		}
	case []any:
		for _, e := range v {
			s.delimiters(e)
		}
	}
}

func stringAt(m map[string]any, keys ...string) string {
	var v any = m
	for _, k := range keys {
		mm, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = mm[k]
	}
	str, _ := v.(string)
	return str
}
