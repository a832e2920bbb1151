package appset

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ferry-gitops/ferry/internal/app"
)

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

var goTemplateOptions = map[string]bool{
	"missingkey=default": true, "missingkey=invalid": true, "missingkey=zero": true, "missingkey=error": true,
}

var policies = []string{PolicySync, PolicyCreateOnly, PolicyCreateUpdate, PolicyCreateDelete}

// validate checks the values of a parsed set; the fields were checked by
// Read. Each problem names its field and what to write instead.
func validate(s *ApplicationSet) []app.FieldError {
	var errs []app.FieldError
	add := func(field, format string, args ...any) {
		errs = append(errs, app.FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if s.APIVersion != app.APIVersion {
		add("apiVersion", "expected %s, got %q", app.APIVersion, s.APIVersion)
	}
	switch name := s.Metadata.Name; {
	case name == "":
		add("metadata.name", "required: name the ApplicationSet (a DNS label, such as team-apps)")
	case len(name) > 63 || !dnsLabel.MatchString(name):
		add("metadata.name", "%q is not a DNS label: use at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit", name)
	}
	if p, ok := s.Metadata.Annotations[ProjectAnnotation]; ok && len(validation.IsDNS1123Subdomain(strings.TrimSpace(p))) > 0 {
		add(fmt.Sprintf("metadata.annotations[%q]", ProjectAnnotation), "%q is not a project name: name the AppProject the set runs under, such as team-a, or remove the annotation", p)
	}
	for i, o := range s.Spec.GoTemplateOptions {
		if !goTemplateOptions[o] {
			add(fmt.Sprintf("spec.goTemplateOptions[%d]", i), "%q is not an option of Go templates: use missingkey=error, missingkey=zero or missingkey=default", o)
		}
	}
	if s.Spec.TemplatePatch != "" && !s.Spec.GoTemplate {
		add("spec.templatePatch", "needs goTemplate: true, as in Argo CD: set spec.goTemplate, or move the patch into spec.template")
	}
	for i, g := range s.Spec.Generators {
		errs = append(errs, validateGenerator(g, fmt.Sprintf("spec.generators[%d]", i), 0)...)
	}
	// generators: [] generates no app, as in Argo CD: the set then deletes
	// its apps if its policy deletes, and needs no name.
	if s.Spec.Template.Metadata.Name == "" && len(s.Spec.Generators) > 0 && !generatorsNameApps(s.Spec.Generators) {
		add("spec.template.metadata.name", "required: name each generated app, such as '{{.path.basename}}' (goTemplate) or '{{path.basename}}'")
	}
	if sp := s.Spec.SyncPolicy; sp != nil && sp.ApplicationsSync != "" && !contains(policies, sp.ApplicationsSync) {
		add("spec.syncPolicy.applicationsSync", "%q is not a policy: use one of %s", sp.ApplicationsSync, strings.Join(policies, ", "))
	}
	errs = append(errs, validateStrategy(s.Spec.Strategy)...)
	errs = append(errs, validatePreserved(s.Spec.PreservedFields)...)
	if _, err := ignoreRules(s.Spec.IgnoreApplicationDifferences); err != nil {
		// One line per bad entry, each "field: problem".
		for _, line := range strings.Split(err.Error(), "\n") {
			line = strings.Replace(line, "spec.ignoreDifferences", "spec.ignoreApplicationDifferences", 1)
			field, msg, _ := strings.Cut(line, ": ")
			add(field, "%s", msg)
		}
	}
	return errs
}

// generatorsNameApps: every top-level generator overrides the template's
// name, so spec.template may leave it out.
func generatorsNameApps(gs []Generator) bool {
	for _, g := range gs {
		if t := g.template(); t == nil || t.Metadata.Name == "" {
			return false
		}
	}
	return len(gs) > 0
}

func validateGenerator(g Generator, path string, depth int) []app.FieldError {
	var errs []app.FieldError
	add := func(field, format string, args ...any) {
		errs = append(errs, app.FieldError{Field: path + field, Message: fmt.Sprintf(format, args...)})
	}
	var kinds []string
	if g.List != nil {
		kinds = append(kinds, "list")
		if len(g.List.Elements) == 0 && g.List.ElementsYaml == "" {
			add(".list", "give elements or elementsYaml")
		}
		if len(g.List.Elements) > 0 && g.List.ElementsYaml != "" {
			add(".list", "give elements or elementsYaml, not both")
		}
	}
	if g.Clusters != nil {
		kinds = append(kinds, "clusters")
		errs = append(errs, validateSelector(g.Clusters.Selector, path+".clusters.selector")...)
	}
	if g.Git != nil {
		kinds = append(kinds, "git")
		if g.Git.RepoURL == "" {
			add(".git.repoURL", "required: the repository whose directories or files generate the apps")
		}
		switch {
		case len(g.Git.Directories) == 0 && len(g.Git.Files) == 0:
			add(".git", "give directories or files")
		case len(g.Git.Directories) > 0 && len(g.Git.Files) > 0:
			add(".git", "give directories or files, not both: write two git generators")
		}
		for i, d := range g.Git.Directories {
			if d.Path == "" {
				add(fmt.Sprintf(".git.directories[%d].path", i), "required: a path or glob such as apps/*")
			}
		}
		for i, f := range g.Git.Files {
			if f.Path == "" {
				add(fmt.Sprintf(".git.files[%d].path", i), "required: a path or glob such as config/**/config.json")
			}
		}
		if r := g.Git.RequeueAfterSeconds; r != nil && *r < 0 {
			add(".git.requeueAfterSeconds", "must not be negative")
		}
	}
	if g.Matrix != nil {
		kinds = append(kinds, "matrix")
		if depth > 1 {
			add(".matrix", "generators nest at most two levels deep, as in Argo CD")
		}
		if len(g.Matrix.Generators) != 2 {
			add(".matrix.generators", "a matrix combines exactly two generators; found %d", len(g.Matrix.Generators))
		}
		for i, c := range g.Matrix.Generators {
			errs = append(errs, validateGenerator(c, fmt.Sprintf("%s.matrix.generators[%d]", path, i), depth+1)...)
		}
	}
	if g.Merge != nil {
		kinds = append(kinds, "merge")
		if depth > 1 {
			add(".merge", "generators nest at most two levels deep, as in Argo CD")
		}
		if len(g.Merge.Generators) < 2 {
			add(".merge.generators", "a merge needs at least two generators; found %d", len(g.Merge.Generators))
		}
		if len(g.Merge.MergeKeys) == 0 {
			add(".merge.mergeKeys", "required: the parameters that match the sets of the generators, such as server")
		}
		for i, c := range g.Merge.Generators {
			errs = append(errs, validateGenerator(c, fmt.Sprintf("%s.merge.generators[%d]", path, i), depth+1)...)
		}
	}
	if g.PullRequest != nil {
		kinds = append(kinds, "pullRequest")
		errs = append(errs, validatePullRequest(g.PullRequest, path)...)
	}
	if g.SCMProvider != nil {
		kinds = append(kinds, "scmProvider")
		errs = append(errs, validateSCMProvider(g.SCMProvider, path)...)
	}
	if g.ClusterDecisionResource != nil {
		kinds = append(kinds, "clusterDecisionResource")
		errs = append(errs, validateDuckType(g.ClusterDecisionResource, path)...)
	}
	if g.Plugin != nil {
		kinds = append(kinds, "plugin")
		errs = append(errs, validatePlugin(g.Plugin, path)...)
	}
	switch len(kinds) {
	case 0:
		if len(errs) == 0 {
			add("", "no generator: give one of list, clusters, git, matrix, merge, pullRequest, scmProvider, clusterDecisionResource or plugin")
		}
	case 1:
	default:
		add("", "one generator per entry, found %s: write each as an entry of its own", strings.Join(kinds, " and "))
	}
	errs = append(errs, validateSelector(g.Selector, path+".selector")...)
	return errs
}

var selectorOps = []string{"In", "NotIn", "Exists", "DoesNotExist"}

func validateSelector(sel *LabelSelector, path string) []app.FieldError {
	if sel == nil {
		return nil
	}
	var errs []app.FieldError
	for i, r := range sel.MatchExpressions {
		p := fmt.Sprintf("%s.matchExpressions[%d]", path, i)
		if r.Key == "" {
			errs = append(errs, app.FieldError{Field: p + ".key", Message: "required"})
		}
		switch {
		case !contains(selectorOps, r.Operator):
			errs = append(errs, app.FieldError{Field: p + ".operator", Message: fmt.Sprintf("%q is not an operator: use one of %s", r.Operator, strings.Join(selectorOps, ", "))})
		case (r.Operator == "In" || r.Operator == "NotIn") && len(r.Values) == 0:
			errs = append(errs, app.FieldError{Field: p + ".values", Message: r.Operator + " needs at least one value"})
		case (r.Operator == "Exists" || r.Operator == "DoesNotExist") && len(r.Values) > 0:
			errs = append(errs, app.FieldError{Field: p + ".values", Message: r.Operator + " takes no values: remove them"})
		}
	}
	return errs
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// template is the generator's template override, if any.
func (g Generator) template() *Template {
	switch {
	case g.List != nil:
		return g.List.Template
	case g.Clusters != nil:
		return g.Clusters.Template
	case g.Git != nil:
		return g.Git.Template
	case g.Matrix != nil:
		return g.Matrix.Template
	case g.Merge != nil:
		return g.Merge.Template
	case g.PullRequest != nil:
		return g.PullRequest.Template
	case g.SCMProvider != nil:
		return g.SCMProvider.Template
	case g.ClusterDecisionResource != nil:
		return g.ClusterDecisionResource.Template
	case g.Plugin != nil:
		return g.Plugin.Template
	}
	return nil
}

var stepOps = []string{"In", "NotIn"}

// validateStrategy checks spec.strategy: AllAtOnce, or RollingSync with
// steps whose expressions Argo CD can match (In, NotIn) and whose maxUpdate
// is a count or a percentage.
func validateStrategy(st *Strategy) []app.FieldError {
	if st == nil {
		return nil
	}
	var errs []app.FieldError
	add := func(field, format string, args ...any) {
		errs = append(errs, app.FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	switch st.Type {
	case "", StrategyAllAtOnce:
		if st.RollingSync != nil {
			add("spec.strategy.rollingSync", "takes effect only with type: RollingSync: set spec.strategy.type, or remove rollingSync")
		}
		return errs
	case StrategyRollingSync:
	default:
		add("spec.strategy.type", "%q is not a strategy: use AllAtOnce or RollingSync (or leave spec.strategy out)", st.Type)
		return errs
	}
	if st.RollingSync == nil || len(st.RollingSync.Steps) == 0 {
		add("spec.strategy.rollingSync.steps", "required with type: RollingSync: list the steps, each with matchExpressions on the apps' labels")
		return errs
	}
	for i, step := range st.RollingSync.Steps {
		p := fmt.Sprintf("spec.strategy.rollingSync.steps[%d]", i)
		for j, r := range step.MatchExpressions {
			ep := fmt.Sprintf("%s.matchExpressions[%d]", p, j)
			if r.Key == "" {
				add(ep+".key", "required: the app label to match")
			}
			if !contains(stepOps, r.Operator) {
				add(ep+".operator", "%q is not an operator of a RollingSync step: use In or NotIn, as Argo CD", r.Operator)
			} else if len(r.Values) == 0 {
				add(ep+".values", "%s needs at least one value", r.Operator)
			}
		}
		if !validMaxUpdate(step.MaxUpdate) {
			add(p+".maxUpdate", "%q is not a count or a percentage: write a number such as 2, or a string such as \"25%%\"", step.MaxUpdate.String())
		}
	}
	return errs
}
