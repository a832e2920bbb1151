package app

import (
	"strings"
	"testing"
)

func TestCheckRepoURL(t *testing.T) {
	tests := []struct {
		url     string
		wantErr string // empty: accepted
	}{
		{"https://github.com/argoproj/argocd-example-apps", ""},
		{"https://git.example.com/org/repo.git", ""},
		{"http://127.0.0.1:8080/apps.git", ""},
		{"ssh://git@git.example.com:2222/org/repo.git", ""},
		{"git@github.com:org/repo.git", ""},
		{"file:///srv/git/apps.git", ""},
		{"file://localhost/srv/git/apps.git", ""},
		{"", "required"},
		{"https://user:token@github.com/org/repo.git", "credentials belong in the worker configuration"},
		{"https://ghp_abc123@github.com/org/repo.git", "credentials belong in the worker configuration"},
		{"ssh://git:pw@host/org/repo.git", "credentials belong in the worker configuration"},
		{"https:///org/repo.git", "no host"},
		{"git://host/repo.git", `scheme "git"`},
		{"ftp://host/repo.git", `scheme "ftp"`},
		{"cnoe://jupyterhub", ""}, // a placeholder: kept, with a warning
		{"cnoe://", "no host"},
		{"github.com/org/repo", "not a Git URL"},
		{"host:repo.git", "not a Git URL"},
		{"https://host/org repo.git", "spaces"},
		{"file://otherhost/srv/repo.git", "names host"},
		{"file://", "no path"},
	}
	for _, tt := range tests {
		got := checkRepoURL(tt.url)
		if (got == "") != (tt.wantErr == "") || !strings.Contains(got, tt.wantErr) {
			t.Errorf("checkRepoURL(%q) = %q, want %q", tt.url, got, tt.wantErr)
		}
	}
}

func TestCheckRepoPath(t *testing.T) {
	for p, ok := range map[string]bool{
		"": true, ".": true, "guestbook": true, "apps/web/": true, "a..b/c": true,
		"/etc": false, "..": false, "a/../b": false, "../x": false, `\x`: false, `a\..\b`: false,
	} {
		if got := checkRepoPath(p) == ""; got != ok {
			t.Errorf("checkRepoPath(%q) accepted = %t, want %t", p, got, ok)
		}
	}
}

// validApp is a valid Application that each case below breaks in one place.
func validApp() *Application {
	return &Application{
		APIVersion: APIVersion,
		Kind:       Kind,
		Metadata:   ObjectMeta{Name: "web"},
		Spec: Spec{
			Source:      Source{RepoURL: "https://git.example.com/org/apps.git", Path: "web"},
			Destination: &Destination{Name: "us-east-1"},
		},
	}
}

func TestValidateCases(t *testing.T) {
	tests := []struct {
		name   string
		opts   *ValidateOptions // nil: testOptions
		mutate func(a *Application)
		field  string // empty: valid
		msg    string
	}{
		{name: "valid", mutate: func(a *Application) {}},
		{name: "an app of another namespace", mutate: func(a *Application) { a.Qualify("team-a") }},
		{name: "a qualified name of another namespace", mutate: func(a *Application) {
			a.Qualify("team-a")
			a.Metadata.Namespace = "team-b"
		}, field: "metadata.name", msg: `names namespace "team-a", and metadata.namespace is "team-b"`},
		{name: "a slash without a namespace", mutate: func(a *Application) { a.Metadata.Name = "/web" },
			field: "metadata.name", msg: `write the name alone`},
		{name: "two slashes", mutate: func(a *Application) {
			a.Metadata.Name = "team-a/web/x"
			a.Metadata.Namespace = "team-a"
		}, field: "metadata.name", msg: "not a valid name"},
		{name: "any region when none configured", opts: &ValidateOptions{},
			mutate: func(a *Application) { a.Spec.Destination.Name = "mars" }},
		{name: "region must be a DNS label", opts: &ValidateOptions{},
			mutate: func(a *Application) { a.Spec.Destination.Name = "Mars_1" }, field: "spec.destination.name"},
		{name: "server without in-cluster region", opts: &ValidateOptions{Regions: flagRegions([]string{"us-east-1", "eu-west-1"}, "")},
			mutate: func(a *Application) { a.Spec.Destination = &Destination{Server: InClusterServer} },
			field:  "spec.destination.server", msg: "maps no region"},
		{name: "in-cluster name without in-cluster region", opts: &ValidateOptions{Regions: flagRegions([]string{"us-east-1", "eu-west-1"}, "")},
			mutate: func(a *Application) { a.Spec.Destination = &Destination{Name: InClusterName} },
			field:  "spec.destination.name", msg: "maps no region"},
		// With no configuration at all, in-cluster is the region named so;
		// with one region, that one.
		{name: "in-cluster without configuration", opts: &ValidateOptions{},
			mutate: func(a *Application) { a.Spec.Destination = &Destination{Server: InClusterServer} }},
		{name: "in-cluster of the only region", opts: &ValidateOptions{Regions: flagRegions([]string{"us-east-1"}, "")},
			mutate: func(a *Application) { a.Spec.Destination = &Destination{Name: InClusterName} }},
		{name: "server of no region", mutate: func(a *Application) {
			a.Spec.Destination = &Destination{Server: "https://10.9.9.9:6443"}
		}, field: "spec.destination.server", msg: `"https://10.9.9.9:6443" is the server of no region`},
		{name: "name and server", mutate: func(a *Application) { a.Spec.Destination.Server = InClusterServer },
			field: "spec.destination", msg: "not both"},
		{name: "empty destination", mutate: func(a *Application) { a.Spec.Destination = &Destination{Namespace: "x"} },
			field: "spec.destination.name", msg: "required"},
		{name: "in-cluster server duplicates a named region", mutate: func(a *Application) {
			a.Spec.Destination = nil
			a.Spec.Destinations = []Destination{{Name: "us-east-1"}, {Server: InClusterServer}}
		}, field: "spec.destinations[1].server", msg: "listed twice"},
		{name: "dotted name as Argo CD's examples use", mutate: func(a *Application) { a.Metadata.Name = "example.guestbook" }},
		{name: "metadata namespace", mutate: func(a *Application) { a.Metadata.Namespace = "Argo CD" }, field: "metadata.namespace"},
		{name: "label value", mutate: func(a *Application) { a.Metadata.Labels = map[string]string{"team": "a b"} },
			field: `metadata.labels["team"]`},
		{name: "revision starting with a dash", mutate: func(a *Application) { a.Spec.Source.TargetRevision = "--upload-pack=x" },
			field: "spec.source.targetRevision"},
		{name: "helm value file outside the repo", mutate: func(a *Application) {
			a.Spec.Source.Helm = &HelmSource{ValueFiles: []string{"../../etc/values.yaml"}}
		}, field: "spec.source.helm.valueFiles[0]", msg: "leaves the repository"},
		{name: "helm value files from URLs, which the worker fetches", mutate: func(a *Application) {
			a.Spec.Source.Helm = &HelmSource{ValueFiles: []string{"https://example.com/values.yaml", "http://10.0.0.5:8080/v.yaml"}}
		}},
		{name: "helm value file from a URL of another scheme", mutate: func(a *Application) {
			a.Spec.Source.Helm = &HelmSource{ValueFiles: []string{"s3://bucket/values.yaml"}}
		}, field: "spec.source.helm.valueFiles[0]", msg: "write an http:// or https:// URL"},
		{name: "helm value file from a URL with credentials", mutate: func(a *Application) {
			a.Spec.Source.Helm = &HelmSource{ValueFiles: []string{"https://user:pw@example.com/values.yaml"}}
		}, field: "spec.source.helm.valueFiles[0]", msg: `"https://example.com/values.yaml" holds credentials`},
		{name: "helm-secrets value file from a URL", mutate: func(a *Application) {
			a.Spec.Source.Helm = &HelmSource{ValueFiles: []string{"secrets://https://example.com/secrets.yaml"}}
		}, field: "spec.source.helm.valueFiles[0]", msg: "not decrypted"},
		{name: "helm-secrets value file", mutate: func(a *Application) {
			a.Spec.Source.Helm = &HelmSource{ValueFiles: []string{"secrets://secrets.yaml", "values.enc.yaml"}}
		}},
		{name: "helm-secrets value file outside the repo", mutate: func(a *Application) {
			a.Spec.Source.Helm = &HelmSource{ValueFiles: []string{"secrets://../../../x.yaml"}}
		}, field: "spec.source.helm.valueFiles[0]", msg: "leaves the repository"},
		{name: "helm-secrets key import", mutate: func(a *Application) {
			a.Spec.Source.Helm = &HelmSource{ValueFiles: []string{"secrets+age-import://key.txt?secrets.yaml"}}
		}, field: "spec.source.helm.valueFiles[0]", msg: "age identities its operator gives it"},
		{name: "helm values not YAML", mutate: func(a *Application) { a.Spec.Source.Helm = &HelmSource{Values: "a: [\n"} },
			field: "spec.source.helm.values"},
		{name: "helm parameter without name", mutate: func(a *Application) {
			a.Spec.Source.Helm = &HelmSource{Parameters: []HelmParameter{{Value: "1"}}}
		}, field: "spec.source.helm.parameters[0].name"},
		{name: "helm options Argo CD has", mutate: func(a *Application) {
			a.Spec.Source.Helm = &HelmSource{Namespace: "shop", KubeVersion: "1.36", APIVersions: []string{"monitoring.coreos.com/v1"},
				SkipCrds: true, SkipTests: true, SkipSchemaValidation: true, IgnoreMissingValueFiles: true}
		}},
		{name: "helm namespace", mutate: func(a *Application) { a.Spec.Source.Helm = &HelmSource{Namespace: "Shop"} },
			field: "spec.source.helm.namespace"},
		{name: "helm kube version", mutate: func(a *Application) { a.Spec.Source.Helm = &HelmSource{KubeVersion: "latest"} },
			field: "spec.source.helm.kubeVersion", msg: "not a Kubernetes version"},
		{name: "helm api version", mutate: func(a *Application) { a.Spec.Source.Helm = &HelmSource{APIVersions: []string{"a b/v1"}} },
			field: "spec.source.helm.apiVersions[0]"},
		{name: "kustomize namespace", mutate: func(a *Application) { a.Spec.Source.Kustomize = &KustomizeSource{Namespace: "NS"} },
			field: "spec.source.kustomize.namespace"},
		{name: "json pointer escape", mutate: func(a *Application) {
			a.Spec.IgnoreDifferences = []IgnoreDifference{{Kind: "Deployment", JSONPointers: []string{"/metadata/annotations/a~b"}}}
		}, field: "spec.ignoreDifferences[0].jsonPointers[0]", msg: "~0"},
		{name: "jq path expressions and managers", mutate: func(a *Application) {
			a.Spec.IgnoreDifferences = []IgnoreDifference{{Group: "apps", Kind: "Deployment",
				JQPathExpressions:     []string{`.spec.template.spec.containers[] | select(.name == "sidecar") | .image`},
				ManagedFieldsManagers: []string{"kube-controller-manager"}}}
		}},
		{name: "empty manager", mutate: func(a *Application) {
			a.Spec.IgnoreDifferences = []IgnoreDifference{{Kind: "Deployment", ManagedFieldsManagers: []string{" "}}}
		}, field: "spec.ignoreDifferences[0].managedFieldsManagers[0]", msg: "name a field manager"},
		{name: "poll interval unreadable", mutate: func(a *Application) { a.Spec.PollInterval = "often" }, field: "spec.pollInterval"},
		{name: "negative retry limit is unlimited", mutate: func(a *Application) {
			a.Spec.SyncPolicy = &SyncPolicy{Retry: &RetryPolicy{Limit: -3}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := validApp()
			tt.mutate(a)
			opts := testOptions
			if tt.opts != nil {
				opts = *tt.opts
			}
			err := Validate(a, opts)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Validate accepted it")
			}
			assertFieldErrors(t, err, []string{tt.field})
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not contain %q", err, tt.msg)
			}
		})
	}
	if err := Validate(nil, testOptions); !IsValidationError(err) {
		t.Errorf("Validate(nil) = %v", err)
	}
}
