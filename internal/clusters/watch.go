package clusters

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Selector selects the cluster Secrets among a namespace's.
var Selector = SecretTypeLabel + "=" + SecretTypeCluster

// changeDelay gathers the events of one change (kubectl apply of several
// Secrets) into one call of Watch's onChange.
const changeDelay = 200 * time.Millisecond

// Watch calls onChange with the clusters of the namespace's cluster Secrets
// (ordered by Secret name) once it has listed them, and again whenever one
// is added, changed or removed, one call at a time, until ctx ends. It
// returns once the first call is made, or with the error of the first
// list (the Secrets cannot be read: the worker's RBAC, the namespace).
func Watch(ctx context.Context, kube kubernetes.Interface, namespace string, onChange func([]Cluster)) error {
	if _, err := kube.CoreV1().Secrets(namespace).List(ctx, metav1.ListOptions{LabelSelector: Selector, Limit: 1}); err != nil {
		return fmt.Errorf("list the cluster Secrets of namespace %s: %w", namespace, err)
	}
	factory := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = Selector }))
	inf := factory.Core().V1().Secrets()
	changed := make(chan struct{}, 1)
	kick := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { kick() },
		UpdateFunc: func(any, any) { kick() },
		DeleteFunc: func(any) { kick() },
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.Informer().HasSynced) {
		return ctx.Err()
	}
	lister := inf.Lister().Secrets(namespace)
	current := func() []Cluster {
		list, _ := lister.List(labels.Everything())
		slices.SortFunc(list, func(a, b *corev1.Secret) int { return strings.Compare(a.Name, b.Name) })
		out := make([]Cluster, 0, len(list))
		for _, s := range list {
			out = append(out, FromSecret(s))
		}
		return out
	}
	select { // the initial adds: in the first call
	case <-changed:
	default:
	}
	onChange(current())
	go func() {
		defer factory.Shutdown()
		for {
			select {
			case <-ctx.Done():
				return
			case <-changed:
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(changeDelay):
			}
			onChange(current())
		}
	}()
	return nil
}

// List reads the namespace's cluster Secrets once, as clusters.
func List(ctx context.Context, kube kubernetes.Interface, namespace string) ([]Cluster, error) {
	list, err := kube.CoreV1().Secrets(namespace).List(ctx, metav1.ListOptions{LabelSelector: Selector})
	if err != nil {
		return nil, fmt.Errorf("list the cluster Secrets of namespace %s: %w", namespace, err)
	}
	slices.SortFunc(list.Items, func(a, b corev1.Secret) int { return strings.Compare(a.Name, b.Name) })
	out := make([]Cluster, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, FromSecret(&list.Items[i]))
	}
	return out, nil
}
