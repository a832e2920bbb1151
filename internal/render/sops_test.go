package render

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/sopsfile"
)

// sopsKey is an age identity for a test: the Keys a worker holds, and the
// recipient files are encrypted for.
type sopsKey struct {
	keys      *sopsfile.Keys
	recipient string
}

func newSOPSKey(t *testing.T) sopsKey {
	t.Helper()
	id, rcpt, err := sopsfile.NewIdentity()
	require.NoError(t, err)
	keys, err := sopsfile.ParseKeys([]byte(id))
	require.NoError(t, err)
	return sopsKey{keys: keys, recipient: rcpt}
}

// writeTree writes files (path: contents) under a new directory; a path
// ending in "!" is written SOPS-encrypted for key, Kubernetes-style (only
// data and stringData encrypted) when it holds a Secret.
func writeTree(t *testing.T, key sopsKey, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
		data := []byte(body)
		if strings.HasSuffix(name, "!") {
			name = strings.TrimSuffix(name, "!")
			opts := sopsfile.EncryptOptions{Recipients: []string{key.recipient}}
			if strings.Contains(body, "kind: Secret") {
				opts.EncryptedRegex = "^(data|stringData)$"
			}
			var err error
			data, err = sopsfile.Encrypt(data, sopsfile.FormatOf(name), opts)
			require.NoError(t, err)
			require.NotContains(t, string(data), "s3cr3t", "the fixture is encrypted")
		}
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o644))
	}
	return root
}

const sopsSecret = `apiVersion: v1
kind: Secret
metadata:
  name: db
stringData:
  password: s3cr3t-db-password
`

// assertNoPlaintext checks that err says what and where, not the value.
func assertNoPlaintext(t *testing.T, err error, wants ...string) {
	t.Helper()
	require.Error(t, err)
	for _, w := range wants {
		assert.Contains(t, err.Error(), w)
	}
	assert.NotContains(t, err.Error(), "s3cr3t")
	assert.True(t, IsUserError(err), "a user's error: %v", err)
}

func TestSOPSDirectory(t *testing.T) {
	key := newSOPSKey(t)
	root := writeTree(t, key, map[string]string{
		"app/secret.yaml!": sopsSecret,
		"app/cm.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\ndata:\n  a: b\n",
	})
	r := &Renderer{SOPS: key.keys}
	res, err := r.Render(context.Background(), root, app.Source{Path: "app"}, Options{})
	require.NoError(t, err)
	secret := find(t, res.Objects, "Secret/db")
	assertField(t, secret, "s3cr3t-db-password", "stringData", "password")
	assert.NotContains(t, secret.Object, "sops", "the SOPS metadata is not part of the object")
	find(t, res.Objects, "ConfigMap/plain")

	other := newSOPSKey(t)
	_, err = (&Renderer{SOPS: other.keys}).Render(context.Background(), root, app.Source{Path: "app"}, Options{})
	assertNoPlaintext(t, err, "render app/secret.yaml:", key.recipient, "--sops-age-key-file")
	assert.NotContains(t, err.Error(), other.recipient)

	_, err = Render(context.Background(), root, app.Source{Path: "app"}, Options{})
	assertNoPlaintext(t, err, "render app/secret.yaml:", "no age identities")
}

func TestSOPSKustomize(t *testing.T) {
	key := newSOPSKey(t)
	files := map[string]string{
		// KSOPS, as Argo CD users write it.
		"overlay/kustomization.yaml": "namePrefix: prod-\nresources:\n  - cm.yaml\n  - api.enc.yaml\ngenerators:\n  - secret-generator.yaml\n",
		"overlay/secret-generator.yaml": `apiVersion: viaduct.ai/v1
kind: ksops
metadata:
  name: secret-generator
  annotations:
    config.kubernetes.io/function: |
      exec:
        path: ksops
files:
  - ./secrets/db.enc.yaml
  - ../shared/extra.enc.yaml
`,
		"overlay/cm.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n",
		"overlay/secrets/db.enc.yaml!": sopsSecret,
		"shared/extra.enc.yaml!":       "apiVersion: v1\nkind: Secret\nmetadata:\n  name: extra\ndata:\n  token: czNjcjN0LXRva2Vu\n",
		// Flux's form: an encrypted manifest among the resources.
		"overlay/api.enc.yaml!": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: api\nstringData:\n  key: s3cr3t-api-key\n",
	}
	root := writeTree(t, key, files)
	res, err := (&Renderer{SOPS: key.keys}).Render(context.Background(), root, app.Source{Path: "overlay"}, Options{})
	require.NoError(t, err)
	assert.Equal(t, SourceTypeKustomize, res.SourceType)
	assertNames(t, res.Objects, []string{"ConfigMap/prod-settings", "Secret/prod-api", "Secret/prod-db", "Secret/prod-extra"})
	assertField(t, find(t, res.Objects, "Secret/prod-db"), "s3cr3t-db-password", "stringData", "password")
	assertField(t, find(t, res.Objects, "Secret/prod-extra"), "czNjcjN0LXRva2Vu", "data", "token")
	assertField(t, find(t, res.Objects, "Secret/prod-api"), "s3cr3t-api-key", "stringData", "key")
	before, err := os.ReadFile(filepath.Join(root, "overlay", "kustomization.yaml"))
	require.NoError(t, err)
	assert.Equal(t, files["overlay/kustomization.yaml"], string(before), "the checkout is not written")

	other := newSOPSKey(t)
	_, err = (&Renderer{SOPS: other.keys}).Render(context.Background(), root, app.Source{Path: "overlay"}, Options{})
	assertNoPlaintext(t, err, "render overlay/", ".enc.yaml: SOPS: no age identity", key.recipient)

	t.Run("secretFrom", func(t *testing.T) {
		root := writeTree(t, key, map[string]string{
			"k/kustomization.yaml": "generators:\n  - gen.yaml\n",
			"k/gen.yaml":           "apiVersion: viaduct.ai/v1\nkind: ksops\nmetadata:\n  name: g\nsecretFrom:\n  - metadata:\n      name: x\n    files:\n      - a.enc.txt\n",
		})
		_, err := (&Renderer{SOPS: key.keys}).Render(context.Background(), root, app.Source{Path: "k"}, Options{})
		assertNoPlaintext(t, err, "k/gen.yaml", "KSOPS secretFrom")
	})
}

const sopsChartSecret = `apiVersion: v1
kind: Secret
metadata:
  name: {{ .Release.Name }}-db
stringData:
  password: {{ .Values.db.password | quote }}
  motd: {{ .Values.motd | quote }}
{{- if .Values.explode }}
{{ fail (printf "cannot greet with %s" .Values.motd) }}
{{- end }}
`

func TestSOPSHelmValueFiles(t *testing.T) {
	key := newSOPSKey(t)
	root := writeTree(t, key, map[string]string{
		"chart/Chart.yaml":            "apiVersion: v2\nname: shop\nversion: 0.1.0\n",
		"chart/values.yaml":           "db:\n  password: changeme\nmotd: hello\nexplode: false\n",
		"chart/templates/secret.yaml": sopsChartSecret,
		"chart/secrets.yaml!":         "db:\n  password: s3cr3t-from-helm-secrets\n",
		"chart/values.enc.yaml!":      "motd: s3cr3t-greeting-of-the-day\n",
		"chart/plain.yaml":            "motd: not secret\n",
	})
	src := app.Source{Path: "chart", Helm: &app.HelmSource{ValueFiles: []string{"secrets://secrets.yaml", "values.enc.yaml"}}}
	r := &Renderer{SOPS: key.keys}
	res, err := r.Render(context.Background(), root, src, Options{AppName: "shop"})
	require.NoError(t, err)
	secret := find(t, res.Objects, "Secret/shop-db")
	assertField(t, secret, "s3cr3t-from-helm-secrets", "stringData", "password")
	assertField(t, secret, "s3cr3t-greeting-of-the-day", "stringData", "motd")

	// A template that fails quoting a decrypted value: the value is masked.
	explode := src
	explode.Helm = &app.HelmSource{ValueFiles: src.Helm.ValueFiles, Parameters: []app.HelmParameter{{Name: "explode", Value: "true"}}}
	_, err = r.Render(context.Background(), root, explode, Options{AppName: "shop"})
	assertNoPlaintext(t, err, "cannot greet with")

	other := newSOPSKey(t)
	_, err = (&Renderer{SOPS: other.keys}).Render(context.Background(), root, src, Options{AppName: "shop"})
	assertNoPlaintext(t, err, "render chart/secrets.yaml: SOPS", key.recipient)

	plain := src
	plain.Helm = &app.HelmSource{ValueFiles: []string{"secrets://plain.yaml"}}
	_, err = r.Render(context.Background(), root, plain, Options{AppName: "shop"})
	assertNoPlaintext(t, err, "render chart/plain.yaml: named with secrets://", "not encrypted with SOPS")
}
