package render

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ferry-gitops/ferry/internal/app"
)

// TestKustomizeEdits: the fields of spec.source.kustomize that Argo CD
// applies with kustomize edit (or writes into the kustomization) beyond
// names, images and plain labels.
func TestKustomizeEdits(t *testing.T) {
	const path = "kustomize-overlay/overlays/prod"
	tests := []struct {
		name    string
		opts    app.KustomizeSource
		check   func(t *testing.T, objs map[string]map[string]any)
		wantErr string
	}{
		{name: "forceCommonLabels replaces the kustomization's label", opts: app.KustomizeSource{
			CommonLabels: map[string]string{"env": "dev"}, ForceCommonLabels: true},
			check: func(t *testing.T, objs map[string]map[string]any) {
				if got := nested(objs["Deployment/prod-web"], "metadata", "labels", "env"); got != "dev" {
					t.Errorf("env label = %v, want dev", got)
				}
			}},
		{name: "labelWithoutSelector leaves selectors alone", opts: app.KustomizeSource{
			CommonLabels: map[string]string{"team": "shop"}, LabelWithoutSelector: true},
			check: func(t *testing.T, objs map[string]map[string]any) {
				d := objs["Deployment/prod-web"]
				if nested(d, "metadata", "labels", "team") != "shop" {
					t.Errorf("labels = %v", nested(d, "metadata", "labels"))
				}
				if got := nested(d, "spec", "selector", "matchLabels", "team"); got != nil {
					t.Errorf("the label reached the selector: %v", got)
				}
			}},
		{name: "commonAnnotationsEnvsubst", opts: app.KustomizeSource{
			CommonAnnotations: map[string]string{"app": "${ARGOCD_APP_NAME}-$ARGOCD_APP_REVISION_SHORT"}, CommonAnnotationsEnvsubst: true},
			check: func(t *testing.T, objs map[string]map[string]any) {
				if got := nested(objs["Deployment/prod-web"], "metadata", "annotations", "app"); got != "shop-0123456" {
					t.Errorf("annotation = %v, want shop-0123456", got)
				}
			}},
		{name: "replicas by name, as a number or a string", opts: app.KustomizeSource{
			Replicas: []app.KustomizeReplica{{Name: "web", Count: intstr.FromString("5")}}},
			check: func(t *testing.T, objs map[string]map[string]any) {
				if got := nested(objs["Deployment/prod-web"], "spec", "replicas"); got != int64(5) {
					t.Errorf("replicas = %#v, want 5 (the overlay says 3)", got)
				}
			}},
		{name: "an inline patch with a target", opts: app.KustomizeSource{Patches: []app.KustomizePatch{{
			Target: &app.KustomizeSelector{Kind: "Service"},
			Patch:  `[{"op": "add", "path": "/metadata/labels/patched", "value": "yes"}]`,
		}}},
			check: func(t *testing.T, objs map[string]map[string]any) {
				if got := nested(objs["Service/prod-web"], "metadata", "labels", "patched"); got != "yes" {
					t.Errorf("patched label = %v", got)
				}
				if got := nested(objs["Deployment/prod-web"], "metadata", "labels", "patched"); got != nil {
					t.Errorf("the patch reached the Deployment: %v", got)
				}
			}},
		{name: "components, a missing one ignored", opts: app.KustomizeSource{
			Components: []string{"../../components/team", "../../components/none"}, IgnoreMissingComponents: true},
			check: func(t *testing.T, objs map[string]map[string]any) {
				if got := nested(objs["Deployment/prod-web"], "metadata", "annotations", "component"); got != "team" {
					t.Errorf("component annotation = %v", got)
				}
			}},
		{name: "a missing component", opts: app.KustomizeSource{Components: []string{"../../components/none"}},
			wantErr: "components/none"},
		{name: "version, kubeVersion and apiVersions change nothing", opts: app.KustomizeSource{
			Version: "v5.4.3", KubeVersion: "1.30.0", APIVersions: []string{"monitoring.coreos.com/v1"}},
			check: func(t *testing.T, objs map[string]map[string]any) {
				if objs["Deployment/prod-web"] == nil {
					t.Error("no Deployment")
				}
			}},
	}
	checkout := copyTree(t, "testdata")
	before := snapshot(t, checkout)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			res, err := Render(context.Background(), checkout, app.Source{Path: path, Kustomize: &opts},
				Options{AppName: "shop", Revision: "0123456789abcdef0123456789abcdef01234567"})
			if tc.wantErr != "" {
				assertErr(t, err, tc.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			objs := map[string]map[string]any{}
			for _, o := range res.Objects {
				objs[o.GetKind()+"/"+o.GetName()] = o.Object
			}
			tc.check(t, objs)
		})
	}
	if after := snapshot(t, checkout); after != before {
		t.Fatal("rendering with options changed the checkout")
	}
}
