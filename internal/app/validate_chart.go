package app

import (
	"fmt"
	"net/url"
	"strings"
	"unicode"

	"github.com/Masterminds/semver/v3"
	"k8s.io/apimachinery/pkg/util/validation"
)

const chartRepoForms = "https://charts.example.com (a Helm repository) or oci://registry.example.com/charts (an OCI registry)"

// IsChartSource reports whether src names a chart of a Helm repository or
// OCI registry (spec.source.chart) rather than a path in Git.
func (s Source) IsChartSource() bool { return s.Chart != "" }

// ChartRevision is the version constraint a chart source resolves: its
// targetRevision, with "" and HEAD (Argo CD's default) meaning the newest
// release ("*").
func ChartRevision(targetRevision string) string {
	r := strings.TrimSpace(targetRevision)
	if r == "" || r == DefaultTargetRevision {
		return "*"
	}
	return r
}

// chartSource checks a source that names a chart of a Helm repository or an
// OCI registry, as Argo CD reads one: repoURL is the repository, chart the
// chart's name in it, targetRevision a version or semver constraint.
func (v *validator) chartSource(s *Source, appName string) {
	if msg := checkChartRepoURL(s.RepoURL); msg != "" {
		v.add("spec.source.repoURL", "%s", msg)
	}
	if msg := checkChartName(s.Chart, s.RepoURL); msg != "" {
		v.add("spec.source.chart", "%s", msg)
	}
	if rev := ChartRevision(s.TargetRevision); rev != "" {
		if _, err := semver.NewConstraint(rev); err != nil {
			v.add("spec.source.targetRevision", "%q is not a chart version or semver constraint (%v): write e.g. 1.2.3, 1.2.*, >=1.0.0 <2.0.0 or *", s.TargetRevision, err)
		}
	}
	if s.Path != "" {
		v.add("spec.source.path", "%q: a chart from a Helm repository has no path; remove it (or remove chart to render a path in Git)", s.Path)
	}
	var others []string
	if s.Directory != nil {
		others = append(others, "directory")
	}
	if s.Kustomize != nil {
		others = append(others, "kustomize")
	}
	if s.Plugin != nil {
		others = append(others, "plugin")
	}
	if len(others) > 0 {
		v.add("spec.source", "sets chart and %s: a chart renders with Helm; remove %s", strings.Join(others, " and "), strings.Join(others, " and "))
	}
	if s.Helm != nil {
		v.helm("", s.Helm, appName)
	} else {
		v.helm("", &HelmSource{}, appName)
	}
}

// IsOCIRepoURL reports whether a chart source's repoURL names an OCI
// registry: oci://, or a host/path without a scheme (Argo CD's form for a
// repository with enableOCI).
// An SCP-like Git address (git@host:org/repo) is neither.
func IsOCIRepoURL(repoURL string) bool {
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(repoURL)), "oci://") {
		return true
	}
	return !strings.Contains(repoURL, "://") && !strings.Contains(repoURL, "@")
}

// checkChartName returns what is wrong with a chart source's chart, or "".
// A Helm repository lists a chart by a plain name; in an OCI registry the
// chart is a repository under repoURL, so that Argo CD pulls
// oci://<repoURL>/<chart> and chart may hold more of the path
// (bitnamicharts/thanos with repoURL registry.example.com), each segment a
// name.
func checkChartName(chart, repoURL string) string {
	bad := func(name string) bool {
		return name == "" || strings.ContainsFunc(name, func(c rune) bool { return unicode.IsSpace(c) || unicode.IsControl(c) }) ||
			len(validation.IsDNS1123Subdomain(strings.ToLower(strings.ReplaceAll(name, "_", "-")))) > 0
	}
	if !strings.Contains(chart, "/") {
		if bad(chart) {
			return fmt.Sprintf("%q is not a chart name: write the name the repository lists it under, e.g. nginx", chart)
		}
		return ""
	}
	if !IsOCIRepoURL(repoURL) {
		return fmt.Sprintf("%q is not a chart name: a Helm repository lists its charts by plain name, e.g. nginx; a chart under a path is an OCI registry's (repoURL oci://host/path)", chart)
	}
	for _, seg := range strings.Split(chart, "/") {
		if bad(seg) {
			return fmt.Sprintf("%q is not a chart's path in the registry: write names joined by '/', e.g. bitnamicharts/nginx, without empty segments or spaces", chart)
		}
	}
	return ""
}

// checkChartRepoURL returns what is wrong with the repository of a chart
// source, or "": an http(s) Helm repository, an oci:// registry, or a
// registry's host/path as Argo CD takes with enableOCI.
func checkChartRepoURL(raw string) string {
	if raw == "" {
		return "required: the Helm repository or OCI registry of the chart, e.g. " + chartRepoForms
	}
	if strings.ContainsFunc(raw, func(c rune) bool { return unicode.IsSpace(c) || unicode.IsControl(c) }) {
		return fmt.Sprintf("%q contains spaces or control characters: write it as %s", raw, chartRepoForms)
	}
	if !strings.Contains(raw, "://") {
		raw = "oci://" + raw // Argo CD's form for a repository with enableOCI
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Sprintf("%q is not a valid URL (%v): write it as %s", raw, err, chartRepoForms)
	}
	switch strings.ToLower(u.Scheme) {
	case "https", "http", "oci":
	default:
		return fmt.Sprintf("scheme %q is not a chart repository's: write it as %s", u.Scheme, chartRepoForms)
	}
	if u.User != nil {
		return "carries credentials: credentials belong in the worker's repository Secrets, not in the spec; remove them from the URL"
	}
	if u.Host == "" {
		return fmt.Sprintf("%q has no host: write it as %s", raw, chartRepoForms)
	}
	return ""
}
