package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/ferry-gitops/ferry/e2e/e2etest"
	"github.com/ferry-gitops/ferry/internal/app"
)

const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`

func widget(state string) string {
	return fmt.Sprintf("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: gear\nspec:\n  state: %s\n", state)
}

// argocdCM is an argocd-cm as a team has it: Argo CD's own keys beside a
// Lua health check for a custom resource.
const argocdCM = `apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  namespace: argocd
data:
  url: https://argocd.example.com
  resource.customizations.health.example.com_Widget: |
    hs = {}
    if obj.spec.state == "jammed" then
      hs.status = "Degraded"
      hs.message = "the widget is jammed"
    else
      hs.status = "Healthy"
      hs.message = "turning"
    end
    return hs
`

// TestLuaHealthCheckOfACustomResource: with --resource-customizations, a
// Widget (a CRD the app installs) is as healthy as the script says: a jammed
// one makes the app Degraded with the script's message, a fixing commit
// makes it Healthy again.
func TestLuaHealthCheckOfACustomResource(t *testing.T) {
	startWorker(t, "--resource-customizations", writeFile(t, argocdCM))
	repo := newRepo(t, "lua-health")
	repo.write(map[string]string{"app/crd.yaml": widgetCRD, "app/widget.yaml": widget("jammed")})
	jammed := repo.commitAndPush("a jammed widget")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("lua-health", repo.URL, "app", "lua-health", true, "3m")))

	c := temporalClient(t)
	eventually(t, 2*time.Minute, "app Synced at "+short(jammed)+" and Degraded by the script", func() (bool, string) {
		v, err := queryView(t, c, "lua-health")
		if err != nil {
			return false, err.Error()
		}
		st := v.Status
		widgets := 0
		for _, r := range st.Resources {
			if r.Kind == "Widget" && r.Health == app.HealthDegraded && r.HealthMessage == "the widget is jammed" {
				widgets++
			}
		}
		return st.Sync.Revision == jammed && st.Sync.Status == app.SyncStatusSynced &&
			st.Health.Status == app.HealthDegraded && widgets == len(regions), e2etest.Describe(&st)
	})

	repo.write(map[string]string{"app/widget.yaml": widget("turning")})
	fixed := repo.commitAndPush("unjam the widget")
	mustFerry(t, "app", "refresh", "lua-health")
	waitApp(t, "lua-health", fixed, 2*time.Minute)
}
