package sandbox

import (
	"context"
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/render"
	"github.com/ferry-gitops/ferry/internal/sopsfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

// TestRendererDecryptsSOPS: a SOPS-encrypted Secret renders in clear in a
// sandbox, which gets the worker's age identities on its standard input;
// with another identity the render fails naming the file and its
// recipient, as in-process.
func TestRendererDecryptsSOPS(t *testing.T) {
	const password = "sops-sandboxed-password"
	id, rcpt, err := sopsfile.NewIdentity()
	require.NoError(t, err)
	keys, err := sopsfile.ParseKeys([]byte(id))
	require.NoError(t, err)
	enc, err := sopsfile.Encrypt([]byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: "+password+"\n"),
		sopsfile.YAML, sopsfile.EncryptOptions{Recipients: []string{rcpt}, EncryptedRegex: "^(data|stringData)$"})
	require.NoError(t, err)
	root := t.TempDir()
	writeFiles(t, filepath.Join(root, "app"), map[string]string{"secret.yaml": string(enc)})
	otherID, _, err := sopsfile.NewIdentity()
	require.NoError(t, err)
	otherKeys, err := sopsfile.ParseKeys([]byte(otherID))
	require.NoError(t, err)

	forEachSandbox(t, func(t *testing.T, r Runner) {
		sandboxed := testRenderer(t, r, Limits{})
		sandboxed.Settings.SOPS = keys
		res, err := sandboxed.Render(context.Background(), root, app.Source{Path: "app"}, render.Options{})
		require.NoError(t, err)
		require.Len(t, res.Objects, 1)
		got, _, _ := unstructured.NestedString(res.Objects[0].Object, "stringData", "password")
		assert.Equal(t, password, got)

		sandboxed.Settings.SOPS = otherKeys
		_, err = sandboxed.Render(context.Background(), root, app.Source{Path: "app"}, render.Options{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "render app/secret.yaml: SOPS: no age identity")
		assert.Contains(t, err.Error(), rcpt)
		assert.NotContains(t, err.Error(), password)
		assert.True(t, render.IsUserError(err), "a user's error: %v", err)
	})
}
