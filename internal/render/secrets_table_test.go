package render

import (
	"context"
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/secretmask"
)

// secretCase is a repository that fails to render with a Secret's value
// in it: @S@ in its files stands for the value, @B64@ for its base64.
type secretCase struct {
	name   string
	files  map[string]string
	source app.Source
	// quotes says that the tool's own message quotes the value, so that
	// the case shows the masking at work, not a message that never held it.
	quotes bool
	// delim, when set, is what the case splits the value at: no part of
	// it may show either.
	delim string
}

const secretDoc = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n"

const deployDoc = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    metadata:\n      annotations:\n        db: x\n"

const chartYAML = "apiVersion: v2\nname: shop\nversion: 0.1.0\n"

var kustomizeSecretCases = []secretCase{
	{name: "replacement index of a data value", quotes: true, files: map[string]string{
		"secret.yaml": secretDoc + "data:\n  password: '@B64@'\n", "deploy.yaml": deployDoc,
		"kustomization.yaml": "resources: [secret.yaml, deploy.yaml]\nreplacements:\n- source: {kind: Secret, name: db, fieldPath: data.password, options: {delimiter: '-', index: 5}}\n" +
			"  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [spec.template.metadata.annotations.db]\n"}},
	{name: "replacement index of a generated value", quotes: true, files: map[string]string{
		"deploy.yaml": deployDoc,
		"kustomization.yaml": "resources: [deploy.yaml]\nsecretGenerator:\n- name: db\n  literals: ['password=@S@']\n" +
			"replacements:\n- path: replace.yaml\n",
		"replace.yaml": "- source: {kind: Secret, fieldPath: data.password, options: {delimiter: '=', index: 3}}\n" +
			"  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [spec.template.metadata.annotations.db]\n"}},
	{name: "replacement into a map", files: map[string]string{
		"secret.yaml": secretDoc + "stringData:\n  password: '@S@'\n", "deploy.yaml": deployDoc,
		"kustomization.yaml": "resources: [secret.yaml, deploy.yaml]\nreplacements:\n- source: {kind: Secret, name: db, fieldPath: stringData.password}\n" +
			"  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [spec.template.metadata.annotations.db.deeper]\n"}},
	{name: "patch writes a map where data is a string", files: map[string]string{
		"secret.yaml":        secretDoc + "data: '@B64@'\n",
		"kustomization.yaml": "resources: [secret.yaml]\npatches:\n- patch: |\n    apiVersion: v1\n    kind: Secret\n    metadata: {name: db}\n    data: {password: '@B64@'}\n"}},
	{name: "json patch test of a Secret fails", files: map[string]string{
		"secret.yaml":        secretDoc + "stringData:\n  password: other-value\n",
		"kustomization.yaml": "resources: [secret.yaml]\npatches:\n- target: {kind: Secret, name: db}\n  patch: |\n    - op: test\n      path: /stringData/password\n      value: '@S@'\n"}},
	{name: "json patch in a file replaces a missing path", files: map[string]string{
		"secret.yaml": secretDoc + "stringData:\n  password: other-value\n", "patch.yaml": "- op: replace\n  path: /stringData/nothing/here\n  value: '@S@'\n",
		"kustomization.yaml": "resources: [secret.yaml]\npatches:\n- target: {kind: Secret, name: db}\n  path: patch.yaml\n"}},
	{name: "secretGenerator literal without a key", quotes: true, files: map[string]string{
		"kustomization.yaml": "secretGenerator:\n- name: db\n  literals: ['@S@']\n"}},
	{name: "secretGenerator env line that is not UTF-8", quotes: true, files: map[string]string{
		"db.env": "PASSWORD=\xff@S@\n", "kustomization.yaml": "secretGenerator:\n- name: db\n  envs: [db.env]\n"}},
	{name: "secretGenerator literal twice", files: map[string]string{
		"kustomization.yaml": "secretGenerator:\n- name: db\n  literals: ['password=@S@', 'password=@S@-2']\n"}},
	{name: "secretGenerator file beside a literal of the same key", files: map[string]string{
		"password": "@S@", "kustomization.yaml": "secretGenerator:\n- name: db\n  files: [password]\n  literals: ['password=@S@']\n"}},
	{name: "Secret that does not parse", files: map[string]string{
		"secret.yaml": secretDoc + "stringData:\n  password: '@S@'\n  broken: [\n", "kustomization.yaml": "resources: [secret.yaml]\n"}},
}

var directorySecretCases = []secretCase{
	{name: "directory Secret that does not parse", files: map[string]string{
		"secret.yaml": secretDoc + "data:\n  password: '@B64@'\n  other: @S@: [\n"}},
	{name: "directory Secret of a list that is a string", files: map[string]string{
		"secret.yaml": "apiVersion: v1\nkind: List\nitems: ['@S@']\n---\n" + secretDoc + "stringData: {password: '@S@'}\n"}},
	{name: "directory JSON Secret that does not parse", files: map[string]string{
		"secret.json": `{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"}, "data": {"password": "@B64@"}, "x": @S@}`}},
}

var helmSecretCases = []secretCase{
	{name: "helm required quotes a value", quotes: true, files: map[string]string{
		"Chart.yaml": chartYAML, "values.yaml": "db:\n  password: '@S@'\n",
		"templates/secret.yaml": secretDoc + "stringData:\n  password: {{ required (printf \"db.password %s is too short\" .Values.db.password) nil }}\n"}},
	{name: "helm fail in another template quotes a token", quotes: true, files: map[string]string{
		"Chart.yaml": chartYAML, "values.yaml": "apiToken: '@S@'\n",
		"templates/cm.yaml": "{{ fail (printf \"token %s was refused\" .Values.apiToken) }}\n"}},
	{name: "helm fail quotes a value a Secret template reads", quotes: true, files: map[string]string{
		"Chart.yaml": chartYAML, "values.yaml": "db:\n  pw: '@S@'\n",
		"templates/secret.yaml": secretDoc + "stringData:\n  password: {{ .Values.db.pw }}\n",
		"templates/cm.yaml":     "{{ if .Values.db.pw }}{{ fail (print \"bad: \" .Values.db.pw) }}{{ end }}\n"}},
	{name: "helm include of a value", quotes: true, files: map[string]string{
		"Chart.yaml": chartYAML, "values.yaml": "db:\n  password: '@S@'\n",
		"templates/secret.yaml": secretDoc + "stringData:\n  password: {{ include .Values.db.password . }}\n"}},
	{name: "helm renders a Secret that does not parse", files: map[string]string{
		"Chart.yaml": chartYAML, "values.yaml": "db:\n  password: '@S@'\n",
		"templates/secret.yaml": secretDoc + "stringData:\n  password: {{ .Values.db.password }}\n  broken: [\n"}},
	{name: "helm renders data as a string", files: map[string]string{
		"Chart.yaml": chartYAML, "values.yaml": "db:\n  password: '@S@'\n",
		"templates/secret.yaml": secretDoc + "data: {{ .Values.db.password | b64enc }}\nkind: [\n"}},
	{name: "helm schema refuses a value", quotes: true, files: map[string]string{
		"Chart.yaml": chartYAML, "values.yaml": "db:\n  password: '@S@'\n",
		"values.schema.json":    `{"type": "object", "properties": {"db": {"type": "object", "properties": {"password": {"type": "string", "pattern": "^abc$"}}}}}`,
		"templates/secret.yaml": secretDoc + "stringData:\n  password: {{ .Values.db.password }}\n"}},
	{name: "helm values of the Application quoted by fail", quotes: true,
		source: app.Source{Helm: &app.HelmSource{Values: "db:\n  password: '@S@'\n"}},
		files: map[string]string{"Chart.yaml": chartYAML,
			"templates/secret.yaml": secretDoc + "stringData:\n  password: {{ .Values.db.password | quote }}\n{{ fail (printf \"%q\" .Values.db.password) }}\n"}},
	{name: "helm parameter quoted by fail", quotes: true,
		source: app.Source{Helm: &app.HelmSource{Parameters: []app.HelmParameter{{Name: "db.password", Value: "@S@"}}}},
		files: map[string]string{"Chart.yaml": chartYAML,
			"templates/secret.yaml": secretDoc + "stringData:\n  password: {{ .Values.db.password }}\n{{ fail (toJson .Values) }}\n"}},
	{name: "helm split of a value", quotes: true, delim: "-", files: map[string]string{
		"Chart.yaml": chartYAML, "values.yaml": "db:\n  url: '@S@'\n",
		"templates/secret.yaml": secretDoc + "stringData:\n  url: {{ .Values.db.url }}\n",
		"templates/cm.yaml":     "{{ $p := splitList \"-\" .Values.db.url }}{{ fail (printf \"host %s\" (index $p 0)) }}\n"}},
}

// secretValuesSeed are values the cases are run with; the fuzz target
// tries others.
var secretValuesSeed = []string{"supersecret-prod-db", "hunter2hunter2", "c3VwZXJzZWNyZXQ", "p4ss.w0rd_with-dashes-and+plus"}

func allSecretCases() []secretCase {
	var all []secretCase
	for _, list := range [][]secretCase{kustomizeSecretCases, directorySecretCases, helmSecretCases} {
		all = append(all, list...)
	}
	return all
}

// runSecretCase renders c with value; it gives the error as Render
// returns it, and as the render made it before masking.
func runSecretCase(t *testing.T, c secretCase, value string) (masked, raw error) {
	t.Helper()
	b64 := base64.StdEncoding.EncodeToString([]byte(value))
	fill := strings.NewReplacer("@S@", value, "@B64@", b64)
	root := t.TempDir()
	for name, content := range c.files {
		writeFile(t, filepath.Join(root, "app", name), fill.Replace(content))
	}
	src := c.source
	src.Path = "app"
	if src.Helm != nil {
		h := *src.Helm
		h.Values = fill.Replace(h.Values)
		h.Parameters = append([]app.HelmParameter(nil), h.Parameters...)
		for i := range h.Parameters {
			h.Parameters[i].Value = fill.Replace(h.Parameters[i].Value)
		}
		src.Helm = &h
	}
	opts := Options{AppName: "shop", Namespace: "store"}
	var r Renderer
	_, masked = r.Render(context.Background(), root, src, opts)
	_, _, raw = r.render(context.Background(), root, src, opts)
	return masked, raw
}

// TestSecretValuesNeverInErrors feeds Secrets through the Kustomize, Helm
// and manifest error paths: no error shows a value, plain or in base64,
// and each still says where it failed.
func TestSecretValuesNeverInErrors(t *testing.T) {
	for _, c := range allSecretCases() {
		t.Run(c.name, func(t *testing.T) {
			for _, value := range secretValuesSeed {
				masked, raw := runSecretCase(t, c, value)
				if masked == nil {
					t.Fatalf("with %q: the render succeeded", value)
				}
				forms := c.forms(value)
				if c.quotes && !quotesAny(raw.Error(), forms) {
					t.Errorf("with %q: the tool's own message does not quote the value, the case shows nothing: %v", value, raw)
				}
				assertNoSecret(t, masked.Error(), forms...)
				if !quotesAny(raw.Error(), forms) && masked.Error() != raw.Error() {
					t.Errorf("with %q: a message that holds no value changed:\n%v\nbecame\n%v", value, raw, masked)
				}
				if !strings.HasPrefix(masked.Error(), "render app") {
					t.Errorf("with %q: the error does not name the app path: %v", value, masked)
				}
				if IsUserError(raw) != IsUserError(masked) {
					t.Errorf("with %q: masking changed whether it is a user's error: %v", value, masked)
				}
			}
		})
	}
}

// FuzzSecretValuesNeverInErrors runs every case with other values; go
// test runs the seeds, go test -fuzz tries more.
func FuzzSecretValuesNeverInErrors(f *testing.F) {
	cases := allSecretCases()
	for i := range cases {
		for _, v := range secretValuesSeed {
			f.Add(uint(i), v)
		}
	}
	f.Fuzz(func(t *testing.T, i uint, value string) {
		// Values a YAML file holds as one quoted string of base64 or
		// password characters; others change the documents' shape.
		if len(value) < secretmask.MinLength || strings.Trim(value, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/=._-") != "" {
			t.Skip()
		}
		c := cases[i%uint(len(cases))]
		masked, _ := runSecretCase(t, c, value)
		if masked == nil {
			t.Skip() // a value that makes the case render
		}
		assertNoSecret(t, masked.Error(), c.forms(value)...)
	})
}

// forms are value and, when c splits it, its parts long enough to mask.
func (c secretCase) forms(value string) []string {
	forms := []string{value}
	if c.delim != "" {
		for _, part := range strings.Split(value, c.delim) {
			if len(part) >= secretmask.MinLength {
				forms = append(forms, part)
			}
		}
	}
	return forms
}

// quotesAny tells whether msg holds one of forms, plain or in base64.
func quotesAny(msg string, forms []string) bool {
	for _, f := range forms {
		if strings.Contains(msg, f) || strings.Contains(msg, base64.StdEncoding.EncodeToString([]byte(f))) {
			return true
		}
	}
	return false
}
