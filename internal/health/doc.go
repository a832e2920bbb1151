// Package health tells whether one live Kubernetes object is healthy, the way
// Argo CD users expect: Healthy, Progressing, Degraded, Suspended, or Missing
// when there is no object.
//
// Each kind Ferry understands has its own file with one unexported function
// (deploymentHealth in deployment.go, jobHealth in job.go, ...), dispatched
// from the single switch in Get: Deployment, StatefulSet, DaemonSet,
// ReplicaSet, Pod, Job, PersistentVolumeClaim, Service (LoadBalancer),
// Ingress, HorizontalPodAutoscaler, CustomResourceDefinition, APIService,
// Namespace. The custom resources of common projects (cert-manager, Argo
// Rollouts, External Secrets, Crossplane, KEDA, Flux, Prometheus Operator,
// Strimzi, CloudNativePG, Knative, Istio, Gateway API, Sealed Secrets) have
// their checks in a file per project, dispatched from the crdChecks table
// (crds.go). Any other kind goes by its Ready and Stalled conditions when it
// has them (conditions.go), else it is Healthy once it exists, as in Argo
// CD: most objects (ConfigMaps, RBAC) have no notion of progress.
//
//	code, msg := health.Get(live)
//	if code == app.HealthDegraded {
//		log.Printf("%s/%s: %s", live.GetKind(), live.GetName(), msg)
//	}
//
// Messages describe the object's state in words and counts; they never
// carry an object's body or values.
package health
