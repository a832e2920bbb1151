package render

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"
)

// scanKustomization walks the kustomizations reachable from dir before
// kustomize runs, and refuses what Ferry does not let kustomize do:
//
//   - helmCharts, which kustomize inflates by running the helm binary,
//     unless the Kustomize options enable Helm: they are then inflated
//     by Ferry (inflateCharts), and the inline Helm chart generator stays
//     refused;
//   - unless remote bases are allowed, any reference kustomize would fetch
//     from the network or clone: a Git URL among resources, bases,
//     components, generators, transformers and validators (kustomize's
//     forms: https://, http://, ssh://, file://, git::, user@host:,
//     github.com/...); when they are allowed, each is resolved to the
//     checkout the worker fetched (see FetchRemoteBases) and scanned in
//     turn;
//   - whether remote bases are allowed or not, an http(s) URL where
//     kustomize reads a file (crds, configurations, patches, replacements,
//     openapi, generator files and env files, and the path fields of
//     transformer configs).
//
// Kustomize itself cannot be told not to fetch, so the check comes first.
// It reads every kustomization and builtin plugin config as kustomize reads
// it: with kustomize's own types and decoding, field names matched without
// regard to case, inline configs included, and what does not parse refused.
// Local paths are left to kustomize and repoFS, which keeps them inside
// the repository.
//
// It also tells whether the build may set kustomize's OpenAPI schema: a
// kustomization with an openapi field. The kustomizations that name
// remote bases are overridden in fsys with copies naming their checkouts.
func (r *Renderer) scanKustomization(fsys *repoFS, dir string, remote []RemoteBase) (*kustScan, error) {
	s := &kustScan{fs: fsys, allowRemote: r.AllowRemoteBases, enableHelm: r.Kustomize.EnableHelm, seen: map[string]bool{}, known: remote}
	if err := s.dir(dir); err != nil {
		return nil, err
	}
	if err := s.applyRewrites(); err != nil {
		return nil, err
	}
	return s, s.applyKSOPS()
}

type kustScan struct {
	fs          *repoFS
	allowRemote bool
	seen        map[string]bool
	// setsSchema is set by an openapi field.
	setsSchema bool
	// enableHelm takes helmCharts into charts, to inflate; without it
	// they are refused.
	enableHelm bool
	charts     []kustCharts
	// listOnly walks what it can, refusing nothing (KustomizeCharts).
	listOnly bool

	// Remote bases: fetch fetches one (on the worker, FetchRemoteBases);
	// without it, known are the ones fetched (in the render). bases are
	// those met so far, depth how many remote bases deep the scan is.
	fetch func(RemoteRef) (RemoteBase, error)
	known []RemoteBase
	bases []RemoteBase
	depth int
	// rewrites are, by kustomization directory, the remote entries to
	// replace by local paths; kustFiles the kustomization file of each
	// directory scanned.
	rewrites  map[string]map[string]string
	kustFiles map[string]string
	// ksopsGens are, by kustomization directory, its KSOPS generators
	// (kustomize_ksops.go).
	ksopsGens map[string][]ksopsEntry
}

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
	if s.kustFiles == nil {
		s.kustFiles = map[string]string{}
	}
	s.kustFiles[real] = file
	display := s.fs.display(file)
	k, err := readKustomization(display, data)
	if err != nil {
		return err
	}
	switch {
	case len(k.HelmChartInflationGenerator) > 0:
		return inlineHelmError(display)
	case len(k.HelmCharts) == 0 && k.HelmGlobals == nil:
	case !s.enableHelm:
		return helmChartsError(display)
	default:
		s.charts = append(s.charts, kustCharts{dir: real, file: file, display: display, globals: k.HelmGlobals, charts: k.HelmCharts})
	}
	if len(k.OpenAPI) > 0 {
		s.setsSchema = true
	}
	for _, f := range []namedEntries{
		{"resources", k.Resources}, {"bases", k.Bases}, {"components", k.Components},
		{"generators", k.Generators}, {"transformers", k.Transformers}, {"validators", k.Validators},
	} {
		for _, entry := range f.entries {
			if err := s.target(real, display, f.field, entry); err != nil {
				return err
			}
		}
	}
	files := []namedEntries{{"crds", k.Crds}, {"configurations", k.Configurations},
		{"openapi.path", []string{k.OpenAPI["path"]}}}
	for _, patch := range k.PatchesStrategicMerge {
		files = append(files, namedEntries{"patchesStrategicMerge", []string{string(patch)}})
	}
	for _, patch := range k.Patches {
		files = append(files, namedEntries{"patches.path", []string{patch.Path}})
	}
	for _, patch := range k.PatchesJson6902 {
		files = append(files, namedEntries{"patchesJson6902.path", []string{patch.Path}})
	}
	for _, r := range k.Replacements {
		files = append(files, namedEntries{"replacements.path", []string{r.Path}})
	}
	for _, g := range k.ConfigMapGenerator {
		files = append(files, sourceFiles("configMapGenerator", g.KvPairSources))
	}
	for _, g := range k.SecretGenerator {
		files = append(files, sourceFiles("secretGenerator", g.KvPairSources))
	}
	return s.files(display, files)
}

// namedEntries are the entries of one field of a kustomization or config.
type namedEntries struct {
	field   string
	entries []string
}

// readKustomization parses a kustomization as kustomize does: field names
// matched without regard to case (Resources: is resources:), unknown fields
// refused. What kustomize cannot read fails here, before it runs.
func readKustomization(display string, data []byte) (*types.Kustomization, error) {
	if _, err := yaml.YAMLToJSON(data); err != nil {
		return nil, yamlError(display, yamlDoc{index: 1, line: 1}, err)
	}
	var k types.Kustomization
	if err := k.Unmarshal(data); err != nil {
		return nil, &ParseError{File: display, Line: 1, Msg: err.Error(), Err: err}
	}
	return &k, nil
}

// inlineHelmError refuses kustomize's inline Helm chart generator, with
// or without --enable-helm.
func inlineHelmError(display string) error {
	return &UnsupportedError{Path: display, What: "Kustomize's inline Helm chart generators (helmChartInflationGenerator, or a HelmChartInflationGenerator config)",
		Reason: "Ferry inflates the charts of helmCharts only, with --enable-helm: list the chart there"}
}

func helmChartsError(display string) error {
	return &UnsupportedError{Path: display, What: "Kustomize helmCharts", Verb: "need --enable-helm",
		Reason: "set kustomize.buildOptions: --enable-helm in the worker's argocd-cm (--resource-customizations), as for Argo CD; or point an Application of its own at the chart"}
}

// target checks an entry of resources, bases, components, generators,
// transformers or validators. Kustomize takes an entry of the last three for an inline
// config when it parses as one, and any entry for a file, a directory or a
// URL otherwise; both readings are checked, so that neither hides a fetch.
func (s *kustScan) target(real, display, field, entry string) error {
	plugin := field != "resources" && field != "bases" && field != "components"
	if plugin {
		if err := s.pluginConfig(display, []byte(entry)); err != nil {
			return err
		}
	}
	if isRemoteTarget(entry) || isHTTP(entry) {
		if s.listOnly {
			return nil
		}
		if s.allowRemote {
			return s.remoteTarget(real, display, field, entry)
		}
		return s.remote(display, field, entry)
	}
	p := filepath.Join(real, filepath.FromSlash(entry))
	switch {
	case s.fs.IsDir(p):
		return s.dir(p)
	case plugin && s.fs.Exists(p):
		data, err := s.fs.ReadFile(p)
		if err != nil {
			return nil // kustomize reports it
		}
		if field == "generators" && isKSOPS(data) {
			s.ksops(real, entry, p)
			return nil
		}
		return s.pluginConfig(s.fs.display(p), data)
	}
	return nil
}

// pluginConfig is what kustomize reads of a builtin generator, transformer
// or validator config that can name a file: decoded as kustomize decodes
// those configs, field names matched without regard to case.
type pluginConfig struct {
	Kind         string                   `json:"kind"`
	Path         string                   `json:"path"`
	Paths        []string                 `json:"paths"`
	Replacements []types.ReplacementField `json:"replacements"`
	types.KvPairSources
}

// pluginConfig checks the documents of a builtin transformer, generator or
// validator config (a file, or inline in the kustomization) for file paths
// that are URLs, and refuses the Helm chart generator.
func (s *kustScan) pluginConfig(display string, data []byte) error {
	for _, doc := range splitYAML(data) {
		var cfg pluginConfig
		if yaml.Unmarshal(doc.data, &cfg) != nil {
			continue // not a config: kustomize takes it for a path, or fails
		}
		if strings.EqualFold(cfg.Kind, "HelmChartInflationGenerator") {
			return inlineHelmError(display)
		}
		files := []namedEntries{{"path", append([]string{cfg.Path}, cfg.Paths...)}, sourceFiles("generator", cfg.KvPairSources)}
		for _, r := range cfg.Replacements {
			files = append(files, namedEntries{"replacements.path", []string{r.Path}})
		}
		if err := s.files(display, files); err != nil {
			return err
		}
	}
	return nil
}

// sourceFiles are a generator's files and env files; a files entry may be
// "key=path".
func sourceFiles(field string, src types.KvPairSources) namedEntries {
	entries := append(append([]string{src.EnvSource}, src.EnvSources...), src.FileSources...)
	for i, entry := range entries {
		if _, p, ok := strings.Cut(entry, "="); ok && isHTTP(p) {
			entries[i] = p
		}
	}
	return namedEntries{field, entries}
}

// files checks entries that kustomize reads as files: an http(s) URL it
// would fetch.
func (s *kustScan) files(display string, fields []namedEntries) error {
	for _, f := range fields {
		for _, entry := range f.entries {
			if err := s.file(display, f.field, entry); err != nil {
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
	switch {
	case s.listOnly:
		return nil
	case s.allowRemote:
		return &UnsupportedError{
			Path: display,
			What: fmt.Sprintf("remote files (%s: %q)", field, entry),
			Verb: "are not fetched",
			Reason: "Ferry fetches remote Git bases only, never a file from a URL; vendor the file into the repository, " +
				"or name the Git repository that holds it as a base",
		}
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
