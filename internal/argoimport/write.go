package argoimport

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// FieldManager is the field manager of what import writes.
const FieldManager = "ferry-import"

var resourceOf = map[string]schema.GroupVersionResource{
	"ConfigMap": configMaps, "Secret": secrets, "AppProject": AppProjects, "ApplicationSet": ApplicationSets, "Application": Applications,
}

// Write applies the plan's objects to the control cluster (server-side,
// as FieldManager), in the plan's order: an app's project is there before
// the app.
func (p *Plan) Write(ctx context.Context, control dynamic.Interface) error {
	for _, obj := range p.Objects {
		gvr, ok := resourceOf[obj.GetKind()]
		if !ok {
			return fmt.Errorf("import: no resource for kind %s", obj.GetKind())
		}
		_, err := control.Resource(gvr).Namespace(obj.GetNamespace()).Apply(ctx, obj.GetName(), obj,
			metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
		if err != nil {
			return fmt.Errorf("import: write %s %s/%s into the control cluster: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
		}
	}
	return nil
}

// WriteRegions writes dir/regions.yaml, the workers' --regions-config, and
// dir/kubeconfig (mode 0600: it holds the clusters' credentials), a
// context per region named after it.
func (p *Plan) WriteRegions(dir string) (regionsFile, kubeconfig string, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", err
	}
	data, err := yaml.Marshal(p.Regions.File)
	if err != nil {
		return "", "", err
	}
	regionsFile, kubeconfig = filepath.Join(dir, "regions.yaml"), filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(regionsFile, data, 0o644); err != nil {
		return "", "", err
	}
	if err := clientcmd.WriteToFile(*p.Regions.Kubeconfig, kubeconfig); err != nil {
		return "", "", err
	}
	return regionsFile, kubeconfig, os.Chmod(kubeconfig, 0o600)
}
