package bench

import (
	"fmt"
	"path"
)

// The resources of a benchmark app come in units of ten, the shape of a
// small service: one Deployment (one replica, which kwok runs), one Service
// in front of it, eight ConfigMaps. resourceFiles writes one file each.
// rev goes into every ConfigMap and into the Deployment's pod template, so
// that a new rev changes every object and rolls the Deployments out.
func resourceFiles(dir string, n, rev int) map[string]string {
	files := make(map[string]string, n)
	for i := range n {
		unit := i / 10
		name := fmt.Sprintf("r%04d", i)
		var body string
		switch i % 10 {
		case 0:
			name = fmt.Sprintf("web-%03d", unit)
			body = deploymentYAML(name, rev)
		case 1:
			name = fmt.Sprintf("web-%03d", unit)
			body = serviceYAML(name)
			name += "-svc"
		default:
			body = configMapYAML(name, rev)
		}
		files[path.Join(dir, name+".yaml")] = body
	}
	return files
}

func deploymentYAML(name string, rev int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
  labels: {app: %[1]s}
spec:
  replicas: 1
  selector:
    matchLabels: {app: %[1]s}
  template:
    metadata:
      labels: {app: %[1]s}
      annotations: {bench.ferry.dev/rev: "%[2]d"}
    spec:
      containers:
        - name: web
          image: registry.k8s.io/pause:3.10
          ports: [{containerPort: 8080}]
`, name, rev)
}

func serviceYAML(name string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata:
  name: %[1]s
spec:
  selector: {app: %[1]s}
  ports: [{port: 80, targetPort: 8080}]
`, name)
}

func configMapYAML(name string, rev int) string {
	return fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
data:
  rev: "%d"
  settings.yaml: |
    log_level: info
    feature_flags: [a, b, c]
    upstream: http://backend.internal:8080
`, name, rev)
}

// resourceMix describes resourceFiles' output in the report.
func resourceMix(n int) string {
	d := (n + 9) / 10
	s := 0
	if n > 1 {
		s = (n + 8) / 10
	}
	return fmt.Sprintf("%d resources: %s of one replica, %s, %s", n, plural(d, "Deployment"), plural(s, "Service"), plural(n-d-s, "ConfigMap"))
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
