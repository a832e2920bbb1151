package manifests

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/gitsource/gittest"
)

// benchObjects is about how many objects each benchmark source renders.
const benchObjects = 500

// benchRepo commits a Helm chart and a Kustomize overlay of benchObjects
// objects each to a bare repository and returns a Loader's Repos for it,
// the repository and the commit.
func benchRepo(b *testing.B) (*gitsource.Repos, string, string) {
	b.Helper()
	s := gittest.NewServer(b)
	w := s.NewRepo(b, "bench")
	files := map[string]string{
		"chart/Chart.yaml":  "apiVersion: v2\nname: shop\nversion: 1.0.0\n",
		"chart/values.yaml": fmt.Sprintf("services: %d\nimage: registry.example.com/shop\ntag: \"1.0\"\nreplicas: 2\n", benchObjects/2),
		"chart/templates/services.yaml": `{{- range $i := until (int .Values.services) }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $.Release.Name }}-svc-{{ $i }}
  labels: {app: svc-{{ $i }}, release: {{ $.Release.Name }}}
spec:
  replicas: {{ $.Values.replicas }}
  selector: {matchLabels: {app: svc-{{ $i }}}}
  template:
    metadata: {labels: {app: svc-{{ $i }}}}
    spec:
      containers:
      - name: app
        image: "{{ $.Values.image }}:{{ $.Values.tag }}"
        ports: [{containerPort: 8080}]
        resources: {requests: {cpu: 10m, memory: 32Mi}}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ $.Release.Name }}-svc-{{ $i }}
spec:
  selector: {app: svc-{{ $i }}}
  ports: [{port: 80, targetPort: 8080}]
{{- end }}
`,
		"kustomize/overlays/prod/kustomization.yaml": "resources:\n- ../../base\nnamePrefix: prod-\nnamespace: shop\nlabels:\n- pairs:\n    env: prod\n  includeSelectors: true\nimages:\n- name: registry.example.com/shop\n  newTag: \"2.0\"\n",
	}
	var resources []string
	const perFile = 10
	for f := 0; f < benchObjects/2/perFile; f++ {
		var sb strings.Builder
		for i := f * perFile; i < (f+1)*perFile; i++ {
			fmt.Fprintf(&sb, benchKustomizeDoc, i, i, i, i, i, i)
		}
		name := fmt.Sprintf("svc-%02d.yaml", f)
		files["kustomize/base/"+name] = sb.String()
		resources = append(resources, "- "+name)
	}
	files["kustomize/base/kustomization.yaml"] = "resources:\n" + strings.Join(resources, "\n") + "\n"
	sha := w.Commit("bench sources", files)
	w.Push()
	repos, err := gitsource.New(gitsource.Options{CacheDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	return repos, s.URL("bench"), sha
}

const benchKustomizeDoc = `---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: svc-%d
spec:
  replicas: 2
  selector: {matchLabels: {app: svc-%d}}
  template:
    metadata: {labels: {app: svc-%d}}
    spec:
      containers:
      - name: app
        image: registry.example.com/shop:1.0
        resources: {requests: {cpu: 10m, memory: 32Mi}}
---
apiVersion: v1
kind: Service
metadata:
  name: svc-%d
spec:
  selector: {app: svc-%d}
  ports: [{port: 80, targetPort: 8080, name: http-%d}]
`

// BenchmarkRenderHelm and BenchmarkRenderKustomize load a source of about
// 500 objects through a Loader with the in-process cache: cold (an empty
// cache: checkout of a commit already fetched, render, encode) and warm (a
// cache hit: decode and digest check).
func BenchmarkRenderHelm(b *testing.B) {
	benchmarkLoad(b, app.Source{Path: "chart", Helm: &app.HelmSource{Parameters: []app.HelmParameter{{Name: "tag", Value: "1.1"}}}})
}

func BenchmarkRenderKustomize(b *testing.B) {
	benchmarkLoad(b, app.Source{Path: "kustomize/overlays/prod", Kustomize: &app.KustomizeSource{Images: []string{"registry.example.com/shop:2.1"}}})
}

func benchmarkLoad(b *testing.B, src app.Source) {
	repos, url, sha := benchRepo(b)
	ctx := context.Background()
	req := Request{RepoURL: url, SHA: sha, Source: src, App: "shop", Namespace: "shop"}
	first, err := (&Loader{Repos: repos}).LoadApp(ctx, req) // fetch once
	if err != nil {
		b.Fatal(err)
	}
	if first.Count < benchObjects {
		b.Fatalf("%d objects, want %d", first.Count, benchObjects)
	}
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			l := &Loader{Repos: repos, Cache: NewMemory(0, 0)}
			if got, err := l.LoadApp(ctx, req); err != nil || got.CacheHit {
				b.Fatalf("cold load: %v", err)
			}
		}
		b.ReportMetric(float64(first.Count), "objects")
	})
	b.Run("warm", func(b *testing.B) {
		l := &Loader{Repos: repos, Cache: NewMemory(0, 0)}
		if _, err := l.LoadApp(ctx, req); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if got, err := l.LoadApp(ctx, req); err != nil || !got.CacheHit {
				b.Fatalf("warm load: %v", err)
			}
		}
		b.ReportMetric(float64(first.Count), "objects")
	})
}
