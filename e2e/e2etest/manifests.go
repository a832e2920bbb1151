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
