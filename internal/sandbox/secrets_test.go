package sandbox

import (
	"context"
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/render"
)

// TestRendererShowsNoSecretValue: a render in a sandbox that fails on a
// Secret's value (a Kustomize replacement's index, a chart's fail) answers
// with the error masked, as in-process, still a user's error.
func TestRendererShowsNoSecretValue(t *testing.T) {
	const password = "supersecret-prod-db"
	root := t.TempDir()
	writeFiles(t, filepath.Join(root, "kust"), map[string]string{
		"secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: " + base64.StdEncoding.EncodeToString([]byte(password)) + "\n",
		"deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    metadata:\n      annotations:\n        db: x\n",
		"kustomization.yaml": "resources: [secret.yaml, deploy.yaml]\nreplacements:\n- source: {kind: Secret, name: db, fieldPath: data.password, options: {delimiter: '-', index: 5}}\n" +
			"  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [spec.template.metadata.annotations.db]\n",
	})
	writeFiles(t, filepath.Join(root, "chart"), map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: shop\nversion: 0.1.0\n",
		"values.yaml": "db:\n  password: " + password + "\n",
		"templates/secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n" +
			"  password: {{ required (printf \"%s is too short\" .Values.db.password) nil }}\n",
	})
	forEachSandbox(t, func(t *testing.T, r Runner) {
		sandboxed := testRenderer(t, r, Limits{})
		for _, path := range []string{"kust", "chart"} {
			src, opts := app.Source{Path: path}, render.Options{AppName: "shop"}
			_, err := sandboxed.Render(context.Background(), root, src, opts)
			_, want := sandboxed.Settings.Render(context.Background(), root, src, opts)
			if err == nil || want == nil {
				t.Fatalf("%s: rendered: %v, in-process %v", path, err, want)
			}
			for _, form := range []string{password, base64.StdEncoding.EncodeToString([]byte(password))} {
				if strings.Contains(err.Error(), form) {
					t.Errorf("%s: the sandbox's error shows %q: %v", path, form, err)
				}
			}
			if err.Error() != want.Error() || !render.IsUserError(err) {
				t.Errorf("%s: sandboxed error %v (user error %v), want the in-process %v", path, err, render.IsUserError(err), want)
			}
		}
	})
}
