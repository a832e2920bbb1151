package e2etest

import "fmt"

// SlowDeployment stays Progressing for minReady seconds after its pods are
// ready, so a sync waits for its health that long.
func SlowDeployment(name string, minReady int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %s
spec:
  replicas: 1
  minReadySeconds: %d
  selector:
    matchLabels: {app: %s}
  template:
    metadata:
      labels: {app: %s}
    spec:
      containers:
        - name: main
          image: registry.invalid/slow:1
`, name, minReady, name, name)
}

// NextWave is a ConfigMap of sync wave 1. Beside a SlowDeployment (wave 0)
// it keeps a sync running while the Deployment becomes healthy: a sync waits
// for a wave before the next, but not for its last wave, as in Argo CD.
const NextWave = `apiVersion: v1
kind: ConfigMap
metadata:
  name: next-wave
  annotations:
    argocd.argoproj.io/sync-wave: "1"
data: {k: v}
`
