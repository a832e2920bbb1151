package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/ferry-gitops/ferry/internal/devenv"
)

const logsDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: nginx, image: nginx:1.27}
      - {name: sidecar, image: busybox:1.36}
`

// TestAppLogs: `ferry app logs` prints the logs of the pods a Deployment of
// the app selects, in every region, through the kubeconfig (the fake
// kubelet serves devenv.FakeLogLine for every container).
func TestAppLogs(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "logs-cli")
	repo.write(map[string]string{"app/web.yaml": logsDeployment,
		"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: b}\n"})
	sha := repo.commitAndPush("a deployment")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("logs-cli", repo.URL, "app", "logs-cli", true, "3m")))
	waitApp(t, "logs-cli", sha, 2*time.Minute)
	mustFerry(t, "app", "wait", "logs-cli", "--health", "--timeout", "2m")

	out := mustFerry(t, "app", "logs", "logs-cli", "--kind", "Deployment", "--name", "web")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	assert.Len(t, lines, 2*2*len(regions), "two pods of two containers in each region:\n%s", out)
	for _, r := range regions {
		assert.Equal(t, 4, strings.Count(out, "["+r+" logs-cli/web-"), out)
	}
	assert.Equal(t, 2*len(regions), strings.Count(out, " sidecar] "+devenv.FakeLogLine), out)

	one := mustFerry(t, "app", "logs", "logs-cli", "--region", regions[0], "-c", "nginx", "--tail", "1")
	assert.Len(t, strings.Split(strings.TrimSpace(one), "\n"), 2, "two pods, one container, in one region:\n%s", one)
	assert.NotContains(t, one, regions[1])
	assert.NotContains(t, one, "sidecar")

	out, err := ferry(t, "app", "logs", "logs-cli", "--kind", "ConfigMap", "--name", "settings")
	assert.Error(t, err)
	assert.Contains(t, out, "ConfigMap logs-cli/settings: has no pods")
}
