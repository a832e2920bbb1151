package kube

import (
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// kindRanks orders objects so that what others need exists first:
// namespaces and their policies, CRDs, identities and RBAC, configuration,
// storage and Services, then workloads, then what points at workloads. Each
// rank is applied as one group; kinds not listed come last. Keys are
// "<group>/<kind>".
var kindRanks = map[string]int{
	"/Namespace":     0,
	"/ResourceQuota": 1,
	"/LimitRange":    1,

	"apiextensions.k8s.io/CustomResourceDefinition": 2,

	"storage.k8s.io/StorageClass":                  3,
	"/PersistentVolume":                            3,
	"scheduling.k8s.io/PriorityClass":              3,
	"/ServiceAccount":                              4,
	"rbac.authorization.k8s.io/ClusterRole":        5,
	"rbac.authorization.k8s.io/Role":               5,
	"rbac.authorization.k8s.io/ClusterRoleBinding": 6,
	"rbac.authorization.k8s.io/RoleBinding":        6,
	"/ConfigMap":                                   7,
	"/Secret":                                      7,
	"/PersistentVolumeClaim":                       8,
	"/Service":                                     9,

	"apps/Deployment":        10,
	"apps/StatefulSet":       10,
	"apps/DaemonSet":         10,
	"apps/ReplicaSet":        10,
	"/ReplicationController": 10,
	"/Pod":                   10,
	"batch/Job":              11,
	"batch/CronJob":          11,

	"autoscaling/HorizontalPodAutoscaler": 12,
	"policy/PodDisruptionBudget":          12,
	"networking.k8s.io/Ingress":           12,
	"networking.k8s.io/NetworkPolicy":     12,
}

// unknownRank is the rank of kinds kindRanks does not list, custom
// resources among them.
const unknownRank = 13

// crdRank is the rank after which Apply waits for CRDs to be Established.
const crdRank = 2

// rankOf returns obj's rank in the apply order.
func rankOf(obj *unstructured.Unstructured) int {
	gvk := obj.GroupVersionKind()
	if r, ok := kindRanks[gvk.Group+"/"+gvk.Kind]; ok {
		return r
	}
	return unknownRank
}

// sortObjects sorts objs in apply order: rank, then kind, namespace, name.
func sortObjects(objs []*unstructured.Unstructured) {
	sort.SliceStable(objs, func(i, j int) bool {
		a, b := objs[i], objs[j]
		if ra, rb := rankOf(a), rankOf(b); ra != rb {
			return ra < rb
		}
		if a.GetKind() != b.GetKind() {
			return a.GetKind() < b.GetKind()
		}
		if a.GetNamespace() != b.GetNamespace() {
			return a.GetNamespace() < b.GetNamespace()
		}
		return a.GetName() < b.GetName()
	})
}

// groupByRank returns objs, sorted, split into groups of equal rank. The
// objects of one group do not depend on each other and may be applied in
// parallel.
func groupByRank(objs []*unstructured.Unstructured) [][]*unstructured.Unstructured {
	sorted := append([]*unstructured.Unstructured(nil), objs...)
	sortObjects(sorted)
	var groups [][]*unstructured.Unstructured
	for i, obj := range sorted {
		if i == 0 || rankOf(obj) != rankOf(sorted[i-1]) {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], obj)
	}
	return groups
}
