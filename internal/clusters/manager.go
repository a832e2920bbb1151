package clusters

import (
	"context"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// The identity argocd cluster add gives Argo CD in a cluster it adds, and
// Ferry gives itself alike: a ServiceAccount of kube-system bound to a
// ClusterRole that may do everything, and the long-lived token Secret of
// that ServiceAccount.
const (
	ManagerServiceAccount = "argocd-manager"
	ManagerRole           = "argocd-manager-role"
	ManagerRoleBinding    = "argocd-manager-role-binding"
	managerTokenSecret    = "argocd-manager-long-lived-token"
	// tokenWait bounds the wait for the token controller to fill the
	// token Secret in.
	tokenWait = time.Minute
)

// InstallManager makes sure the cluster of rc has the manager
// ServiceAccount (in namespace ns), its ClusterRole and binding, and its
// token Secret, and returns the config a cluster Secret connects with:
// that token and the TLS settings of rc (its CA, server name, insecure).
func InstallManager(ctx context.Context, rc *rest.Config, ns string) (Config, error) {
	kube, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return Config{}, err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: ManagerServiceAccount, Namespace: ns}}
	if _, err := kube.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return Config{}, fmt.Errorf("create ServiceAccount %s/%s: %w", ns, ManagerServiceAccount, err)
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ManagerRole}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}},
		{NonResourceURLs: []string{"*"}, Verbs: []string{"*"}},
	}}
	if _, err := kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return Config{}, fmt.Errorf("create ClusterRole %s: %w", ManagerRole, err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ManagerRoleBinding},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ManagerRole},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: ManagerServiceAccount, Namespace: ns}}}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return Config{}, fmt.Errorf("create ClusterRoleBinding %s: %w", ManagerRoleBinding, err)
	}
	tokenSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: managerTokenSecret, Namespace: ns,
		Annotations: map[string]string{corev1.ServiceAccountNameKey: ManagerServiceAccount}}, Type: corev1.SecretTypeServiceAccountToken}
	if _, err := kube.CoreV1().Secrets(ns).Create(ctx, tokenSecret, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return Config{}, fmt.Errorf("create the token Secret %s/%s: %w", ns, managerTokenSecret, err)
	}
	var token []byte
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, tokenWait, true, func(ctx context.Context) (bool, error) {
		s, err := kube.CoreV1().Secrets(ns).Get(ctx, managerTokenSecret, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		token = s.Data[corev1.ServiceAccountTokenKey]
		return len(token) > 0, nil
	})
	if err != nil {
		return Config{}, fmt.Errorf("the token of ServiceAccount %s/%s (is the cluster's token controller running?): %w", ns, ManagerServiceAccount, err)
	}
	ca := rc.CAData
	if len(ca) == 0 && rc.CAFile != "" {
		if ca, err = os.ReadFile(rc.CAFile); err != nil {
			return Config{}, fmt.Errorf("the cluster's CA: %w", err)
		}
	}
	return Config{BearerToken: string(token), TLS: TLSConfig{CAData: ca, Insecure: rc.Insecure, ServerName: rc.ServerName}}, nil
}
