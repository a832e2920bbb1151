package render

import (
	"context"
	"encoding/base64"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferry-gitops/ferry/internal/app"
)

// assertNoSecret fails when msg holds any of values, plain or in base64.
func assertNoSecret(t *testing.T, msg string, values ...string) {
	t.Helper()
	for _, v := range values {
		for _, form := range []string{v, base64.StdEncoding.EncodeToString([]byte(v)), base64.RawStdEncoding.EncodeToString([]byte(v))} {
			if strings.Contains(msg, form) {
				t.Errorf("the error shows %q (a form of Secret value %q): %s", form, v, msg)
			}
		}
	}
}

// TestReplacementIndexShowsNoSecret: a replacement that splits a Secret's
// value at a delimiter and asks for a part that is not there fails saying
// so, without the value: Kustomize's message quotes it whole.
func TestReplacementIndexShowsNoSecret(t *testing.T) {
	const password = "supersecret-prod-db"
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "app", "secret.yaml"), "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: "+password+"\n")
	writeFile(t, filepath.Join(root, "app", "deploy.yaml"), "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"+
		"spec:\n  template:\n    metadata:\n      annotations:\n        db: x\n")
	writeFile(t, filepath.Join(root, "app", "kustomization.yaml"), `resources:
- secret.yaml
- deploy.yaml
replacements:
- source:
    kind: Secret
    name: db
    fieldPath: stringData.password
    options:
      delimiter: "-"
      index: 5
  targets:
  - select:
      kind: Deployment
    fieldPaths:
    - spec.template.metadata.annotations.db
`)
	_, err := Render(context.Background(), root, app.Source{Path: "app"}, Options{})
	if err == nil {
		t.Fatal("the render succeeded")
	}
	msg := err.Error()
	assertNoSecret(t, msg, password)
	for _, want := range []string{"render app: kustomize: ", "options.index 5 is out of bounds for value ******", "Secret db, stringData.password"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error does not say %q: %s", want, msg)
		}
	}
	if !IsUserError(err) {
		t.Errorf("the masked error is no longer a user's error: %v", err)
	}
	t.Log(msg)
}

// TestMaskErrorOfAnyError: an error the render did not make (a sandbox's
// renderer that crashed, quoting its output) is masked with the secret
// values of the checkout: a generator's literal, a Secret's data.
func TestMaskErrorOfAnyError(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "app", "kustomization.yaml"), "resources: [../base]\nsecretGenerator:\n- name: db\n  literals: [password=hunter2hunter2]\n")
	writeFile(t, filepath.Join(root, "base", "secret.yaml"), "apiVersion: v1\nkind: Secret\nmetadata:\n  name: tls\ndata:\n  key: "+
		base64.StdEncoding.EncodeToString([]byte("private-key-bytes"))+"\n")
	crash := errors.New("render app: the renderer exited with status 2: panic: hunter2hunter2 and private-key-bytes")
	err := (&Renderer{}).MaskError(root, app.Source{Path: "app"}, Options{}, crash)
	assertNoSecret(t, err.Error(), "hunter2hunter2", "private-key-bytes")
	for _, want := range []string{"render app: the renderer exited with status 2: panic: ****** and ******", "secretGenerator db, literal password", "Secret tls, data.key"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
}
