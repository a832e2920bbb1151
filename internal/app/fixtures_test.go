package app

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferry-gitops/ferry/internal/regions"
)

var testOptions = ValidateOptions{
	Regions: flagRegions([]string{"us-east-1", "eu-west-1", "ap-south-1"}, "us-east-1"),
}

// flagRegions is the regions configuration of the workers' shorthand flags
// --regions and --in-cluster-region.
func flagRegions(known []string, inCluster string) *regions.Config {
	rc, err := regions.FromFlags(known, inCluster)
	if err != nil {
		panic(err)
	}
	return rc
}

// invalidFixtures maps each testdata/invalid-*.yaml to the fields its error
// must name (or, for errors about the whole file, substrings of the message).
var invalidFixtures = map[string]struct {
	fields   []string // every one must appear as a FieldError.Field
	contains []string // substrings of err.Error()
	notOne   bool     // wraps ErrNotOneApplication
}{
	// Refused by Parse.
	"invalid-plugin": {fields: []string{"spec.source.plugin.env[0].name", "spec.source.plugin.env[1].name",
		"spec.source.plugin.parameters[0]", "spec.source.plugin.parameters[1]"}},
	"invalid-managed-namespace-metadata": {fields: []string{"spec.syncPolicy.managedNamespaceMetadata"}, contains: []string{"add CreateNamespace=true"}},
	"invalid-managed-namespace-labels": {fields: []string{"spec.syncPolicy.managedNamespaceMetadata.labels", "spec.syncPolicy.managedNamespaceMetadata.annotations"},
		contains: []string{`"web team"`, "bad key!"}},
	"invalid-unknown-field": {fields: []string{"spec.sourc"}, contains: []string{`did you mean "source"`}},
	"invalid-field-case":    {fields: []string{"spec.source.repourl"}, contains: []string{`did you mean "repoURL"`}},
	"invalid-wrong-type": {fields: []string{"spec.source.targetRevision", "spec.syncPolicy.automated", "spec.syncPolicy.retry.limit"},
		contains: []string{"quote the value", `got the string "five"`}},
	"invalid-kustomize-patches": {fields: []string{"spec.source.kustomize.patches[0]"}, contains: []string{"set path (a patch file"}},
	"invalid-multi-document":    {notOne: true, contains: []string{"2 YAML documents", "lines 1, 11"}},
	"invalid-list":              {notOne: true, contains: []string{"List of 2 objects"}},
	"invalid-syntax":            {contains: []string{"line 8"}},
	"invalid-duplicate-key":     {contains: []string{"line 9", `key "path" already set`}},
	"invalid-kind":              {fields: []string{"kind"}, contains: []string{"Deployment"}},
	"invalid-empty":             {notOne: true},
	// Refused by Validate.
	"invalid-sources": {fields: []string{"spec.sources[0].ref", "spec.sources[0].helm.valueFiles[0]", "spec.sources[0].helm.valueFiles[1]",
		"spec.sources[2].ref", "spec.sources[2].repoURL"}, contains: []string{"no entry of spec.sources has ref: config", "also the ref of spec.sources[1]"}},
	"invalid-missing-repo-url":      {fields: []string{"spec.source.repoURL"}, contains: []string{"required"}},
	"invalid-repo-credentials":      {fields: []string{"spec.source.repoURL"}, contains: []string{"credentials belong in the worker configuration, not in the spec"}},
	"invalid-repo-scheme":           {fields: []string{"spec.source.repoURL"}, contains: []string{`scheme "ftp"`}},
	"invalid-path-absolute":         {fields: []string{"spec.source.path"}, contains: []string{"relative"}},
	"invalid-path-dotdot":           {fields: []string{"spec.source.path"}, contains: []string{"'..'"}},
	"invalid-no-destination":        {fields: []string{"spec.destination"}, contains: []string{"us-east-1, eu-west-1, ap-south-1"}},
	"invalid-both-destinations":     {fields: []string{"spec.destinations"}, contains: []string{"not both"}},
	"invalid-unknown-region":        {fields: []string{"spec.destination.name"}, contains: []string{`unknown region "mars": known regions are us-east-1, eu-west-1, ap-south-1`}},
	"invalid-duplicate-region":      {fields: []string{"spec.destinations[1].name"}, contains: []string{"listed twice"}},
	"invalid-remote-server":         {fields: []string{"spec.destination.server"}, contains: []string{"name: <region>"}},
	"invalid-destination-namespace": {fields: []string{"spec.destination.namespace"}},
	"invalid-name":                  {fields: []string{"metadata.name"}},
	"invalid-name-too-long":         {fields: []string{"metadata.name"}, contains: []string{"no more than 253 characters"}},
	"invalid-api-version":           {fields: []string{"apiVersion"}},
	"invalid-two-tools":             {fields: []string{"spec.source"}, contains: []string{"directory and helm"}},
	"invalid-glob":                  {fields: []string{"spec.source.directory.include", "spec.source.directory.exclude"}},
	// Foo=true ([2]) is unknown: accepted with a warning (TestUnknownSyncOptionWarns).
	"invalid-sync-options": {fields: []string{"spec.syncPolicy.syncOptions[1]",
		"spec.syncPolicy.syncOptions[3]", "spec.syncPolicy.syncOptions[4]"}, contains: []string{`"Validate=no"`}},
	"invalid-backoff": {fields: []string{"spec.syncPolicy.retry.backoff.duration", "spec.syncPolicy.retry.backoff.factor",
		"spec.syncPolicy.retry.backoff.maxDuration"}},
	"invalid-ignore-differences": {fields: []string{"spec.ignoreDifferences[0].kind", "spec.ignoreDifferences[0].jsonPointers[0]",
		"spec.ignoreDifferences[2].jqPathExpressions[0]"}},
	"invalid-poll-interval": {fields: []string{"spec.pollInterval"}, contains: []string{"at most once a second"}},
	"invalid-project":       {fields: []string{"spec.project"}},
	"invalid-many":          {fields: []string{"spec.source.repoURL", "spec.destination.name"}},
	"invalid-oci-manifests": {fields: []string{"spec.source.repoURL"}, contains: []string{"OCI artifact of plain manifests (Argo CD 3.1's OCI source)"}},
	"invalid-chart-path": {fields: []string{"spec.sources[0].chart", "spec.sources[1].chart"},
		contains: []string{"lists its charts by plain name", `"akuity//kargo" is not a chart's path in the registry`}},
	"invalid-chart": {fields: []string{"spec.source.repoURL", "spec.source.chart", "spec.source.targetRevision", "spec.source.path", "spec.source"}},
}

func loadFixture(t *testing.T, name string) (*Application, error) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := Parse(data)
	if err != nil {
		return nil, err
	}
	return a, Validate(a, testOptions)
}

func TestFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			_, err := loadFixture(t, name)
			want, invalid := invalidFixtures[name]
			if !invalid {
				if strings.HasPrefix(name, "invalid-") {
					t.Fatalf("fixture %s has no entry in invalidFixtures", name)
				}
				if err != nil {
					t.Fatalf("valid fixture refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("invalid fixture accepted")
			}
			assertFieldErrors(t, err, want.fields)
			for _, s := range want.contains {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error does not mention %q:\n%v", s, err)
				}
			}
			if got := errors.Is(err, ErrNotOneApplication); got != want.notOne {
				t.Errorf("errors.Is(err, ErrNotOneApplication) = %t, want %t: %v", got, want.notOne, err)
			}
		})
	}
	for name := range invalidFixtures {
		if _, err := os.Stat(filepath.Join("testdata", name+".yaml")); err != nil {
			t.Errorf("invalidFixtures names a missing fixture: %v", err)
		}
	}
}

// assertFieldErrors checks that err is a *ValidationError naming each field.
func assertFieldErrors(t *testing.T, err error, fields []string) {
	t.Helper()
	if len(fields) == 0 {
		return
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("want a *ValidationError naming %v, got %T: %v", fields, err, err)
	}
	for _, f := range fields {
		found := false
		for _, fe := range ve.Errors {
			found = found || fe.Field == f
		}
		if !found {
			t.Errorf("error does not name field %s:\n%v", f, err)
		}
	}
}

func TestValidationErrorFormat(t *testing.T) {
	_, err := loadFixture(t, "invalid-many")
	want := `application "guestbook": spec.source.repoURL: required: the Git repository to deploy from, e.g. https://git.example.com/org/repo.git; ` +
		`spec.destination.name: unknown region "mars": known regions are us-east-1, eu-west-1, ap-south-1`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	if !IsValidationError(err) {
		t.Errorf("IsValidationError = false for %T", err)
	}
}
