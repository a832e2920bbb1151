package syncplan

// kindOrder is the order in which kinds are applied within a wave: Helm's
// install order, which Argo CD uses too. Unlike both, a kind counts only in
// its own API group (groupsOf), so a Knative Service or a custom "Job" is
// ordered as the custom resource it is, after every built-in kind.
var kindOrder = []string{
	"Namespace",
	"NetworkPolicy",
	"ResourceQuota",
	"LimitRange",
	"PodSecurityPolicy",
	"PodDisruptionBudget",
	"ServiceAccount",
	"Secret",
	"SecretList",
	"ConfigMap",
	"StorageClass",
	"PersistentVolume",
	"PersistentVolumeClaim",
	"CustomResourceDefinition",
	"ClusterRole",
	"ClusterRoleList",
	"ClusterRoleBinding",
	"ClusterRoleBindingList",
	"Role",
	"RoleList",
	"RoleBinding",
	"RoleBindingList",
	"Service",
	"DaemonSet",
	"Pod",
	"ReplicationController",
	"ReplicaSet",
	"Deployment",
	"HorizontalPodAutoscaler",
	"StatefulSet",
	"Job",
	"CronJob",
	"IngressClass",
	"Ingress",
	"APIService",
}

// groupsOf lists the API groups each kind of kindOrder is served in; a kind
// not listed here is in the core group ("").
var groupsOf = map[string][]string{
	"NetworkPolicy":            {"networking.k8s.io", "extensions"},
	"PodSecurityPolicy":        {"policy", "extensions"},
	"PodDisruptionBudget":      {"policy"},
	"StorageClass":             {"storage.k8s.io"},
	"CustomResourceDefinition": {"apiextensions.k8s.io"},
	"ClusterRole":              {"rbac.authorization.k8s.io"},
	"ClusterRoleList":          {"rbac.authorization.k8s.io"},
	"ClusterRoleBinding":       {"rbac.authorization.k8s.io"},
	"ClusterRoleBindingList":   {"rbac.authorization.k8s.io"},
	"Role":                     {"rbac.authorization.k8s.io"},
	"RoleList":                 {"rbac.authorization.k8s.io"},
	"RoleBinding":              {"rbac.authorization.k8s.io"},
	"RoleBindingList":          {"rbac.authorization.k8s.io"},
	"DaemonSet":                {"apps", "extensions"},
	"ReplicaSet":               {"apps", "extensions"},
	"Deployment":               {"apps", "extensions"},
	"HorizontalPodAutoscaler":  {"autoscaling"},
	"StatefulSet":              {"apps"},
	"Job":                      {"batch"},
	"CronJob":                  {"batch"},
	"IngressClass":             {"networking.k8s.io"},
	"Ingress":                  {"networking.k8s.io", "extensions"},
	"APIService":               {"apiregistration.k8s.io"},
}

// UnknownKind is KindOrder's answer for kinds not in the list: after all.
var UnknownKind = len(kindOrder)

var kindIndex = func() map[string]int {
	m := make(map[string]int, len(kindOrder))
	for i, k := range kindOrder {
		groups := groupsOf[k]
		if len(groups) == 0 {
			groups = []string{""}
		}
		for _, g := range groups {
			m[g+"/"+k] = i
		}
	}
	return m
}()

// KindOrder is the position of a group and kind in the apply order within
// a wave: 0 for Namespace, UnknownKind for kinds not listed.
func KindOrder(group, kind string) int {
	if i, ok := kindIndex[group+"/"+kind]; ok {
		return i
	}
	return UnknownKind
}

// IsNamespace and IsCRD name the kinds that others depend on.
func IsNamespace(group, kind string) bool { return group == "" && kind == "Namespace" }

func IsCRD(group, kind string) bool {
	return group == "apiextensions.k8s.io" && kind == "CustomResourceDefinition"
}
