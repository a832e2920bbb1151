package argoimport

import (
	"context"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// The resources of an Argo CD installation.
var (
	Applications    = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"}
	AppProjects     = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "appprojects"}
	ApplicationSets = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applicationsets"}
	secrets         = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	configMaps      = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// secretTypeLabel is Argo CD's label of its declarative Secrets.
const secretTypeLabel = "argocd.argoproj.io/secret-type"

// copiedConfigMaps are Argo CD's ConfigMaps that Ferry reads in the same
// shape in its control namespace; copiedSecretNames the same of Secrets.
var (
	copiedConfigMaps  = []string{"argocd-cm", "argocd-rbac-cm", "argocd-notifications-cm", "argocd-tls-certs-cm"}
	copiedSecretNames = []string{"argocd-notifications-secret"}
)

// Installation is what import reads of a running Argo CD: the objects of
// its namespace, each as the API server returned it.
type Installation struct {
	Namespace string
	// Server is the API server of the cluster Argo CD runs in: its
	// in-cluster destination (https://kubernetes.default.svc).
	Server string

	Applications, AppProjects, ApplicationSets []unstructured.Unstructured
	// Clusters are its cluster Secrets; Repositories its repository and
	// repo-creds Secrets.
	Clusters, Repositories []unstructured.Unstructured
	// Settings are the ConfigMaps and Secrets copied as they are.
	Settings []unstructured.Unstructured
}

// Read reads the installation in namespace through dyn, whose cluster's
// API server is server.
func Read(ctx context.Context, dyn dynamic.Interface, namespace, server string) (*Installation, error) {
	in := &Installation{Namespace: namespace, Server: server}
	for _, l := range []struct {
		gvr schema.GroupVersionResource
		out *[]unstructured.Unstructured
	}{{Applications, &in.Applications}, {AppProjects, &in.AppProjects}, {ApplicationSets, &in.ApplicationSets}} {
		list, err := dyn.Resource(l.gvr).Namespace(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("list the %s of Argo CD in namespace %s: %w", l.gvr.Resource, namespace, err)
		}
		*l.out = sorted(list.Items)
	}
	list, err := dyn.Resource(secrets).Namespace(namespace).List(ctx, metav1.ListOptions{LabelSelector: secretTypeLabel})
	if err != nil {
		return nil, fmt.Errorf("list Argo CD's Secrets in namespace %s: %w", namespace, err)
	}
	for _, s := range sorted(list.Items) {
		switch s.GetLabels()[secretTypeLabel] {
		case "cluster":
			in.Clusters = append(in.Clusters, s)
		case "repository", "repo-creds", "repository-write", "repo-write-creds":
			in.Repositories = append(in.Repositories, s)
		}
	}
	for _, c := range []struct {
		gvr   schema.GroupVersionResource
		names []string
	}{{configMaps, copiedConfigMaps}, {secrets, copiedSecretNames}} {
		for _, name := range c.names {
			obj, err := dyn.Resource(c.gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("read %s/%s: %w", namespace, name, err)
			}
			in.Settings = append(in.Settings, *obj)
		}
	}
	return in, nil
}

func sorted(items []unstructured.Unstructured) []unstructured.Unstructured {
	sort.Slice(items, func(i, j int) bool { return items[i].GetName() < items[j].GetName() })
	return items
}
