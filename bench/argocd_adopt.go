package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Argo CD's fleet, adopted (-argocd-adopt). On 2 cores Argo CD's own
// onboarding of 1,000 apps takes hours (its controller holds one core:
// each client-side apply parses the cluster's OpenAPI document again, and
// each compare walks its whole cluster cache), longer than a run can wait,
// and its idle cost is of an onboarded fleet. Adopted, the fleet's objects
// are applied first as Argo CD's sync leaves them, then its Applications:
// Argo CD's first reconcile of each finds it Synced, and the fleet is
// idle in minutes. What an idle resync costs does not depend on who
// applied the objects: it renders (from the repo server's cache), compares
// with the cluster cache and writes nothing.

// argoTrackingAnnotation is Argo CD 3's default resource tracking: the
// annotation names the app and the object it was applied as.
const argoTrackingAnnotation = "argocd.argoproj.io/tracking-id"

// argoTrackingID is the annotation's value for obj of app in namespace
// ns: "app:group/Kind:namespace/name", as Argo CD builds it.
func argoTrackingID(app, ns string, obj *unstructured.Unstructured) string {
	gvk := obj.GroupVersionKind()
	return fmt.Sprintf("%s:%s/%s:%s/%s", app, gvk.Group, gvk.Kind, ns, obj.GetName())
}

// argoTracked writes each YAML file of src into dst as JSON with Argo
// CD's tracking annotation for app in namespace ns.
func argoTracked(app, ns, src, dst string) error {
	files, err := filepath.Glob(filepath.Join(src, "*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("argo cd adopt: no manifests in %s (%v)", src, err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(raw, &obj.Object); err != nil {
			return fmt.Errorf("argo cd adopt: %s: %w", f, err)
		}
		ann := obj.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[argoTrackingAnnotation] = argoTrackingID(app, ns, obj)
		obj.SetAnnotations(ann)
		out, err := json.Marshal(obj.Object)
		if err != nil {
			return err
		}
		name := strings.TrimSuffix(filepath.Base(f), ".yaml") + ".json"
		if err := os.WriteFile(filepath.Join(dst, name), out, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// argoAdopt applies every app's objects into its namespace of region as
// Argo CD's sync would (Argo CD's default, client-side apply, which keeps
// kubectl's last-applied annotation; its tracking annotation on each),
// applyParallel apps at a time, and waits for each app's Deployments to be
// Available, so that the stack is quiet again when Argo CD starts. dirs
// maps an app to its directory in its repo's working copy.
func (e *Env) argoAdopt(ctx context.Context, region string, apps []argoApp, dirs map[string]string) (time.Duration, error) {
	tmp, err := e.tempDir("argocd-adopt")
	if err != nil {
		return 0, err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(applyParallel)
	began := time.Now()
	for _, a := range apps {
		g.Go(func() error {
			dst := filepath.Join(tmp, a.Name)
			if err := argoTracked(a.Name, a.Namespace, dirs[a.Name], dst); err != nil {
				return err
			}
			for _, args := range [][]string{
				{"create", "namespace", a.Namespace},
				{"apply", "-n", a.Namespace, "-f", dst},
				{"wait", "-n", a.Namespace, "--for=condition=Available", "deployment", "--all", "--timeout=5m"},
			} {
				if err := e.kubectl(gctx, region, args...); err != nil {
					return fmt.Errorf("argo cd adopt %s: %w", a.Name, err)
				}
			}
			return nil
		})
	}
	err = g.Wait()
	return time.Since(began), err
}

// argoSyncedByItself counts the fleet's Applications whose status holds
// an operation: those Argo CD synced itself, having found them OutOfSync.
func (af *argoFleet) argoSyncedByItself(ctx context.Context) (int, error) {
	list, err := af.argo.apps().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, u := range list.Items {
		if _, ok, _ := unstructured.NestedMap(u.Object, "status", "operationState"); ok {
			n++
		}
	}
	return n, nil
}
