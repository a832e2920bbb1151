package app

import (
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

func TestSummaryOf(t *testing.T) {
	var objs []map[string]any
	for _, doc := range []string{
		`{kind: Deployment, spec: {template: {spec: {initContainers: [{image: busybox:1.36}], containers: [{image: "gcr.io/heptio-images/ks-guestbook-demo:0.2"}, {image: busybox:1.36}]}}}}`,
		`{kind: CronJob, spec: {jobTemplate: {spec: {template: {spec: {containers: [{image: "alpine:3.20"}]}}}}}}`,
		`{kind: Pod, metadata: {annotations: {link.argocd.argoproj.io/external-link: "https://docs.example.com"}}, spec: {containers: [{image: "nginx:1.27"}]}}`,
		`{kind: Ingress, spec: {tls: [{hosts: [shop.example.com]}], rules: [{host: shop.example.com}, {host: admin.example.com}, {host: "*.example.com"}, {}]}}`,
		`{kind: ConfigMap, data: {image: "not-an-image"}}`,
	} {
		var o map[string]any
		require.NoError(t, yaml.Unmarshal([]byte(doc), &o))
		objs = append(objs, o)
	}
	require.Equal(t, &Summary{
		Images:       []string{"alpine:3.20", "busybox:1.36", "gcr.io/heptio-images/ks-guestbook-demo:0.2", "nginx:1.27"},
		ExternalURLs: []string{"http://admin.example.com", "https://docs.example.com", "https://shop.example.com"},
	}, SummaryOf(objs))
	require.Nil(t, SummaryOf(objs[4:]), "nothing to show")
}
