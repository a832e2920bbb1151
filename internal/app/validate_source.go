package app

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/yaml"
)

const repoURLForms = "https://host/org/repo.git, ssh://git@host/org/repo.git, git@host:org/repo.git or file:///path/to/repo.git"

func (v *validator) source(s *Source, appName string) {
	if s.Chart != "" {
		v.chartSource(s, appName)
		return
	}
	v.gitSource(s)

	var tools []string
	if s.Directory != nil {
		tools = append(tools, "directory")
		v.directory(s.Directory)
	}
	if s.Kustomize != nil {
		tools = append(tools, "kustomize")
		v.kustomize(s.Kustomize)
	}
	if s.Helm != nil {
		tools = append(tools, "helm")
		v.helm(s.Path, s.Helm, appName)
	}
	if s.Plugin != nil {
		tools = append(tools, "plugin")
		v.plugin(s.Plugin)
	}
	if len(tools) > 1 {
		v.add("spec.source", "sets %s: a source is rendered by one tool, so keep only one of them", strings.Join(tools, " and "))
	}
}

// gitSource checks the repository, revision and path of a source in Git.
func (v *validator) gitSource(s *Source) {
	if msg := checkRepoURL(s.RepoURL); msg != "" {
		v.add("spec.source.repoURL", "%s", msg)
	}
	if r := s.TargetRevision; r != "" {
		switch {
		case strings.IndexFunc(r, func(c rune) bool { return unicode.IsSpace(c) || unicode.IsControl(c) }) >= 0:
			v.add("spec.source.targetRevision", "%q contains spaces or control characters: write a branch, tag or commit SHA, or remove the field for %s", r, DefaultTargetRevision)
		case strings.HasPrefix(r, "-"):
			v.add("spec.source.targetRevision", "%q starts with '-': write a branch, tag or commit SHA", r)
		}
	}
	if msg := checkRepoPath(s.Path); msg != "" {
		v.add("spec.source.path", "%q %s", s.Path, msg)
	}
}

var scpLikeRE = regexp.MustCompile(`^[^@/:\s]+@[^@/:\s]+:[^\s]+$`)

// checkRepoURL returns what is wrong with a Git repository URL, or "".
func checkRepoURL(raw string) string {
	if raw == "" {
		return "required: the Git repository to deploy from, e.g. https://git.example.com/org/repo.git"
	}
	if strings.IndexFunc(raw, func(c rune) bool { return unicode.IsSpace(c) || unicode.IsControl(c) }) >= 0 {
		return fmt.Sprintf("%q contains spaces or control characters: write a URL such as %s", raw, repoURLForms)
	}
	if !strings.Contains(raw, "://") {
		if scpLikeRE.MatchString(raw) {
			return ""
		}
		return fmt.Sprintf("%q is not a Git URL: write it as %s", raw, repoURLForms)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Sprintf("%q is not a valid URL (%v): write it as %s", raw, err, repoURLForms)
	}
	switch strings.ToLower(u.Scheme) {
	case "https", "http":
		if u.User != nil {
			return "carries credentials: credentials belong in the worker configuration, not in the spec; remove the user and password or token from the URL"
		}
	case "ssh":
		if _, hasPassword := u.User.Password(); hasPassword {
			return "carries a password: credentials belong in the worker configuration, not in the spec; keep only the user name (e.g. ssh://git@host/org/repo.git)"
		}
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return fmt.Sprintf("%q names host %q: a file:// URL points at this machine, write file:///path/to/repo.git", raw, u.Host)
		}
		if u.Path == "" || u.Path == "/" {
			return fmt.Sprintf("%q has no path: write file:///path/to/repo.git", raw)
		}
		return ""
	case "oci":
		// Argo CD 3.1 reads an OCI artifact holding a directory of
		// manifests from such a source; Ferry reads only charts there.
		return fmt.Sprintf("%q with no chart is an OCI artifact of plain manifests (Argo CD 3.1's OCI source), which Ferry does not read yet: "+
			"name a chart of the registry in chart, or keep the manifests in Git (%s)", raw, repoURLForms)
	case "git", "ftp", "ftps":
		// Transports Git has and Ferry does not fetch over: unencrypted
		// or obsolete, each with a form that is neither.
		return fmt.Sprintf("scheme %q is not supported: write the URL as %s", u.Scheme, repoURLForms)
	default:
		// A scheme of no Git transport (cnoe://name, a placeholder that a
		// tool rewrites): kept with a warning (PlaceholderScheme).
	}
	if u.Host == "" {
		return fmt.Sprintf("%q has no host: write it as %s", raw, repoURLForms)
	}
	return ""
}

// PlaceholderScheme returns the scheme of a repoURL written with a scheme
// that is no Git transport (cnoe://jupyterhub, a placeholder that a tool
// such as idpbuilder rewrites before it applies the file), or "". Argo CD
// stores such an Application and shows the fetch's error; so does Ferry:
// Validate accepts it and Warnings names it.
func PlaceholderScheme(raw string) string {
	if !strings.Contains(raw, "://") || checkRepoURL(raw) != "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	switch s := strings.ToLower(u.Scheme); s {
	case "https", "http", "ssh", "file":
		return ""
	default:
		return s
	}
}

// checkRepoPath returns what is wrong with a path inside the repository, or "".
func checkRepoPath(p string) string {
	switch {
	case p == "":
		return ""
	case strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`):
		return "is absolute: write it relative to the repository root, e.g. apps/guestbook"
	case hasDotDot(p):
		return "contains '..': a path must stay inside the repository; write it relative to the repository root"
	}
	return ""
}

func hasDotDot(p string) bool {
	for _, seg := range strings.FieldsFunc(p, func(c rune) bool { return c == '/' || c == '\\' }) {
		if seg == ".." {
			return true
		}
	}
	return false
}

func (v *validator) directory(d *DirectorySource) {
	for _, f := range []struct{ name, value string }{{"include", d.Include}, {"exclude", d.Exclude}} {
		if f.value == "" {
			continue
		}
		if err := ValidateGlob(f.value); err != nil {
			v.add("spec.source.directory."+f.name, "%q is not a valid glob: %v; write it like *.yaml or {deploy.yaml,service.yaml}", f.value, err)
		}
	}
	if j := d.Jsonnet; j != nil {
		v.jsonnetVars("extVars", j.ExtVars)
		v.jsonnetVars("tlas", j.TLAs)
		for i, lib := range j.Libs {
			field := fmt.Sprintf("spec.source.directory.jsonnet.libs[%d]", i)
			if strings.TrimSpace(lib) == "" {
				v.add(field, "empty: write a directory relative to the repository root, e.g. vendor, or remove the entry")
			} else if msg := checkRepoPath(lib); msg != "" {
				v.add(field, "%q %s", lib, msg)
			}
		}
	}
}

func (v *validator) jsonnetVars(kind string, vars []JsonnetVar) {
	seen := map[string]bool{}
	for i, jv := range vars {
		field := fmt.Sprintf("spec.source.directory.jsonnet.%s[%d].name", kind, i)
		switch {
		case jv.Name == "":
			v.add(field, "required: the name the Jsonnet code reads the value by")
		case seen[jv.Name]:
			v.add(field, "%q is given twice: keep one", jv.Name)
		}
		seen[jv.Name] = true
	}
}

func (v *validator) kustomize(k *KustomizeSource) {
	if k.Namespace != "" {
		if errs := validation.IsDNS1123Label(k.Namespace); len(errs) > 0 {
			v.add("spec.source.kustomize.namespace", "%q is not a valid namespace: %s", k.Namespace, strings.Join(errs, "; "))
		}
	}
	for i, img := range k.Images {
		if strings.TrimSpace(img) == "" {
			v.add(fmt.Sprintf("spec.source.kustomize.images[%d]", i), "empty: write an image override such as nginx=nginx:1.27 or remove the entry")
		}
	}
	v.labels("spec.source.kustomize.commonLabels", k.CommonLabels)
	for _, key := range sortedKeys(k.CommonAnnotations) {
		if errs := validation.IsQualifiedName(key); len(errs) > 0 {
			v.add(fmt.Sprintf("spec.source.kustomize.commonAnnotations[%q]", key), "not a valid annotation key: %s", strings.Join(errs, "; "))
		}
	}
	v.kustomizeEdits(k) // validate_kustomize.go
}

func (v *validator) helm(srcPath string, h *HelmSource, appName string) {
	if h.ReleaseName != "" {
		errs := validation.IsDNS1123Subdomain(h.ReleaseName)
		if len(h.ReleaseName) > MaxReleaseNameLength {
			errs = append(errs, fmt.Sprintf("must be no more than %d characters", MaxReleaseNameLength))
		}
		if len(errs) > 0 {
			v.add("spec.source.helm.releaseName", "%q is not a valid Helm release name: %s", h.ReleaseName, strings.Join(errs, "; "))
		}
	} else if len(appName) > MaxReleaseNameLength {
		v.add("spec.source.helm.releaseName", "required: the release name is the app's name, %d characters long, and Helm allows %d: set a shorter releaseName",
			len(appName), MaxReleaseNameLength)
	}
	for i, vf := range h.ValueFiles {
		p := fmt.Sprintf("spec.source.helm.valueFiles[%d]", i)
		vf, named := SecretsValueFile(vf)
		switch {
		case named && strings.HasPrefix(vf, "$"):
			v.add(p, "%q: a value file of another source is not named with %s: list it as %s; Ferry decrypts any SOPS-encrypted value file",
				h.ValueFiles[i], SecretsValueFilePrefix, vf)
		case strings.HasPrefix(vf, "secrets+") && strings.Contains(vf, "://"):
			v.add(p, "%q: helm-secrets' key imports and other backends are not supported: the worker decrypts with the age identities its operator gives it; write %spath",
				vf, SecretsValueFilePrefix)
		case vf == "":
			v.add(p, "empty: write a path relative to spec.source.path, e.g. values-production.yaml")
		case strings.HasPrefix(vf, "$"):
			v.refValueFile(p, vf) // validate_sources.go
		case named && strings.Contains(vf, "://"):
			v.add(p, "%q: a value file from a URL is not decrypted: commit the encrypted file to the repository and name it %spath", h.ValueFiles[i], SecretsValueFilePrefix)
		case strings.Contains(vf, "://"):
			if shown, msg := checkValueFileURL(vf); msg != "" {
				v.add(p, "%q %s", shown, msg)
			}
		case strings.HasPrefix(vf, "/"):
			v.add(p, "%q is absolute: write it relative to spec.source.path, e.g. values-production.yaml", vf)
		case escapesRepo(path.Join(srcPath, vf)):
			v.add(p, "%q leaves the repository: value files must be inside it", vf)
		}
	}
	if h.Namespace != "" {
		if errs := validation.IsDNS1123Label(h.Namespace); len(errs) > 0 {
			v.add("spec.source.helm.namespace", "%q is not a valid namespace: %s", h.Namespace, strings.Join(errs, "; "))
		}
	}
	if h.KubeVersion != "" {
		if _, err := version.ParseGeneric(h.KubeVersion); err != nil {
			v.add("spec.source.helm.kubeVersion", "%q is not a Kubernetes version: write it as v1.37.2 or 1.37", h.KubeVersion)
		}
	}
	for i, api := range h.APIVersions {
		if api == "" || strings.ContainsFunc(api, unicode.IsSpace) {
			v.add(fmt.Sprintf("spec.source.helm.apiVersions[%d]", i), "%q: write an API version such as monitoring.coreos.com/v1 or monitoring.coreos.com/v1/ServiceMonitor", api)
		}
	}
	if h.Values != "" {
		var values map[string]any
		if err := yaml.Unmarshal([]byte(h.Values), &values); err != nil {
			v.add("spec.source.helm.values", "not a YAML object (%v): write the values as YAML, or move them to valuesObject", err)
		}
	}
	switch h.Version {
	case "", "v3":
	case "v2":
		v.add("spec.source.helm.version", "Helm 2 is not supported (Argo CD dropped it too): Ferry renders with Helm 3; write v3 or remove the field")
	default:
		v.add("spec.source.helm.version", "%q is not a Helm version: write v3 or remove the field", h.Version)
	}
	for i, param := range h.Parameters {
		if param.Name == "" {
			v.add(fmt.Sprintf("spec.source.helm.parameters[%d].name", i), "required: the value's path, e.g. image.tag")
		}
	}
	v.helmFileParameters(h) // validate_helm_files.go
}

func escapesRepo(p string) bool {
	p = path.Clean(p)
	return p == ".." || strings.HasPrefix(p, "../")
}
