package appset

import (
	"strings"
	"testing"
)

// TestArgoTemplateFuncs: the functions Argo CD adds to Sprig render as its
// controller renders them.
func TestArgoTemplateFuncs(t *testing.T) {
	long := "feat/a_really+long_pull_request_name_to_test_argo_slugification_and_branch_name_shortening_feature"
	oneWord := "feat/areallylongpullrequestnametotestargoslugificationandbranchnameshorteningfeature"
	params := Params{
		"long": long, "oneWord": oneWord, "name": "My_App.Prod--",
		"yaml": "hello: world\nlist: [a, b]", "array": "- hello world\n- bonjour tout le monde",
		"nested": map[string]any{"bar": map[string]any{"bool": true, "number": 2, "str": "Hello world"}},
	}
	for _, c := range []struct{ tmpl, want, err string }{
		{tmpl: `{{ normalize .name }}`, want: "my-app.prod"},
		{tmpl: `{{ normalize "Feature/ABC_1" }}`, want: "feature-abc-1"},
		{tmpl: `{{ slugify .name }}`, want: "my-app-prod"},
		{tmpl: `{{ slugify 50 false .long }}`, want: "feat-a-really-long-pull-request-name-to-test-argo"},
		{tmpl: `{{ slugify 53 true .long }}`, want: "feat-a-really-long-pull-request-name-to-test-argo"},
		{tmpl: `{{ slugify 50 true .oneWord }}`, want: "feat"},
		{tmpl: `{{ slugify 50 false .oneWord }}`, want: "feat-areallylongpullrequestnametotestargoslugifica"},
		{tmpl: `{{ slugify .long }}`, want: "feat-a-really-long-pull-request-name-to-test-argo"},
		{tmpl: `{{ slugify 10 .long }}`, want: "feat-a"},
		{tmpl: `{{ slugify "a" 10 }}`, err: "slugify: argument 1 is string"},
		{tmpl: `{{ toYaml .nested | indent 2 }}`, want: "  bar:\n    bool: true\n    number: 2\n    str: Hello world"},
		{tmpl: `{{ get (fromYaml .yaml) "hello" }}`, want: "world"},
		{tmpl: `{{ (fromYaml .yaml).list | last }}`, want: "b"},
		{tmpl: `{{ fromYamlArray .array | last }}`, want: "bonjour tout le monde"},
		{tmpl: `{{ get (fromYaml "non\n compliant\n yaml") "hello" }}`, err: "cannot unmarshal string into Go value of type map[string]interface"},
		{tmpl: `{{ fromYamlArray "non\n compliant\n yaml" | last }}`, err: "cannot unmarshal string into Go value of type []interface"},
		{tmpl: `{{ env "HOME" }}`, err: `function "env" not defined`},
	} {
		got, err := renderer{goTemplate: true}.renderString(c.tmpl, params)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one with %q", c.tmpl, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.tmpl, err)
		case c.err == "" && got != c.want:
			t.Errorf("%s = %q, want %q", c.tmpl, got, c.want)
		}
	}
}
