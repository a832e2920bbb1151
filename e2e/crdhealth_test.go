package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/ferry-gitops/ferry/e2e/e2etest"
	"github.com/ferry-gitops/ferry/internal/app"
)

const certificateCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: certificates.cert-manager.io
spec:
  group: cert-manager.io
  names: {kind: Certificate, plural: certificates, singular: certificate}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`

const certificate = `apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: web-tls
spec:
  secretName: web-tls
  dnsNames: [web.example.com]
  issuerRef: {name: letsencrypt, kind: ClusterIssuer}
`

// TestBuiltInHealthOfACertificate: a cert-manager Certificate (its CRD in
// the app) is Progressing until cert-manager, played by the test, writes
// Ready=True in its status, which makes the app Healthy without a commit;
// a failed issuance makes it Degraded with cert-manager's reason. No
// customization is configured: the check is built in.
func TestBuiltInHealthOfACertificate(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "cert-health")
	repo.write(map[string]string{"app/crd.yaml": certificateCRD, "app/cert.yaml": certificate})
	sha := repo.commitAndPush("a certificate")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("cert-health", repo.URL, "app", "cert-health", true, "3m")))
	t.Cleanup(func() { _, _ = ferry(t, "app", "delete", "cert-health", "--cascade") })

	c := temporalClient(t)
	waitCert := func(what string, health app.HealthStatusCode, message string) {
		t.Helper()
		eventually(t, 2*time.Minute, what, func() (bool, string) {
			v, err := queryView(t, c, "cert-health")
			if err != nil {
				return false, err.Error()
			}
			st := v.Status
			certs := 0
			for _, r := range st.Resources {
				if r.Kind == "Certificate" && r.Health == health && r.HealthMessage == message {
					certs++
				}
			}
			return st.Sync.Revision == sha && st.Sync.Status == app.SyncStatusSynced && st.Health.Status == health &&
				certs == len(regions), e2etest.Describe(&st)
		})
	}
	waitCert("the certificate waits for cert-manager", app.HealthProgressing, "waiting for cert-manager to issue the certificate")

	gvr := schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: "certificates"}
	setStatus := func(conditions ...map[string]any) {
		t.Helper()
		for _, r := range regions {
			rc, err := stack.RestConfig(r)
			require.NoError(t, err)
			dyn, err := dynamic.NewForConfig(rc)
			require.NoError(t, err)
			certs := dyn.Resource(gvr).Namespace("cert-health")
			cur, err := certs.Get(context.Background(), "web-tls", metav1.GetOptions{})
			require.NoError(t, err)
			conds := make([]any, len(conditions))
			for i, c := range conditions {
				c["observedGeneration"] = cur.GetGeneration()
				c["lastTransitionTime"] = time.Now().UTC().Format(time.RFC3339)
				conds[i] = c
			}
			require.NoError(t, unstructured.SetNestedSlice(cur.Object, conds, "status", "conditions"))
			_, err = certs.UpdateStatus(context.Background(), cur, metav1.UpdateOptions{})
			require.NoError(t, err, "status of the certificate in %s", r)
		}
	}
	setStatus(map[string]any{"type": "Ready", "status": "True", "reason": "Ready", "message": "Certificate is up to date and has not expired"})
	waitCert("the certificate Ready: the app Healthy", app.HealthHealthy, "")

	setStatus(
		map[string]any{"type": "Ready", "status": "False", "reason": "Expired", "message": "Certificate expired"},
		map[string]any{"type": "Issuing", "status": "False", "reason": "Failed", "message": "the ACME order was refused"},
	)
	waitCert("the issuance failed: the app Degraded", app.HealthDegraded, fmt.Sprintf("certificate issuance failed: %s", "Failed: the ACME order was refused"))
}
