package render

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferry-gitops/ferry/internal/app"
)

// TestToolErrorsShowNoSecretData: a kustomize error that dumps a node of a
// Secret says what was wrong without the node's contents.
func TestToolErrorsShowNoSecretData(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "app", "secret.yaml"), "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata: c3VwZXJzZWNyZXQ=\n")
	writeFile(t, filepath.Join(root, "app", "kustomization.yaml"), "resources:\n- secret.yaml\npatches:\n- patch: |\n"+
		"    apiVersion: v1\n    kind: Secret\n    metadata: {name: db}\n    data: {password: aHVudGVyMg==}\n")
	_, err := Render(context.Background(), root, app.Source{Path: "app"}, Options{})
	assertErr(t, err, "render app: kustomize: wrong node kind: expected ScalarNode but got MappingNode (the node's contents are not shown: they may hold a Secret's data)")
	for _, secret := range []string{"aHVudGVyMg==", "c3VwZXJzZWNyZXQ="} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows %s: %v", secret, err)
		}
	}
}

func TestRedactContents(t *testing.T) {
	tests := []struct{ in, want string }{
		{"wrong node kind: expected MappingNode but got ScalarNode: node contents:\nc3Vw\n", "wrong node kind: expected MappingNode but got ScalarNode (the node's contents are not shown: they may hold a Secret's data)"},
		{"yaml: unmarshal errors:\n  line 5: cannot unmarshal !!str `c3VwZXI=` into map[string]interface {}", "yaml: unmarshal errors:\n  line 5: cannot unmarshal !!str value into map[string]interface {}"},
		{"yaml: line 3: mapping values are not allowed in this context", "yaml: line 3: mapping values are not allowed in this context"},
	}
	for _, tc := range tests {
		if got := redactContents(tc.in); got != tc.want {
			t.Errorf("redactContents(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
