package accounts

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// Config is what ferry-server reads of the control namespace, kept up to
// date by informers: its ConfigMaps (argocd-cm, argocd-rbac-cm) and the
// Secret argocd-secret, listed and watched by name (no other Secret).
type Config struct {
	ns      string
	cms     listersv1.ConfigMapLister
	secrets listersv1.SecretLister
}

// WatchConfig starts the informers, waits until they have listed, and
// calls onChange after every change until ctx ends.
func WatchConfig(ctx context.Context, kc kubernetes.Interface, ns string, onChange func()) (*Config, error) {
	cmf := informers.NewSharedInformerFactoryWithOptions(kc, 10*time.Minute, informers.WithNamespace(ns))
	secf := informers.NewSharedInformerFactoryWithOptions(kc, 10*time.Minute, informers.WithNamespace(ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = "metadata.name=" + SecretName }))
	c := &Config{ns: ns, cms: cmf.Core().V1().ConfigMaps().Lister(), secrets: secf.Core().V1().Secrets().Lister()}
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { onChange() },
		UpdateFunc: func(any, any) { onChange() },
		DeleteFunc: func(any) { onChange() },
	}
	for _, inf := range []cache.SharedIndexInformer{cmf.Core().V1().ConfigMaps().Informer(), secf.Core().V1().Secrets().Informer()} {
		if _, err := inf.AddEventHandler(handler); err != nil {
			return nil, err
		}
	}
	cmf.Start(ctx.Done())
	secf.Start(ctx.Done())
	cmSynced := cmf.WaitForCacheSync(ctx.Done())
	secSynced := secf.WaitForCacheSync(ctx.Done())
	for _, synced := range []bool{allTrue(cmSynced), allTrue(secSynced)} {
		if !synced {
			return nil, fmt.Errorf("list the ConfigMaps and the Secret %s of namespace %s of the control cluster: not listed before the start was cancelled", SecretName, ns)
		}
	}
	return c, nil
}

func allTrue[K comparable](m map[K]bool) bool {
	for _, ok := range m {
		if !ok {
			return false
		}
	}
	return true
}

// ConfigMap is the data of the ConfigMap name, or none.
func (c *Config) ConfigMap(name string) map[string]string {
	cm, err := c.cms.ConfigMaps(c.ns).Get(name)
	if err != nil {
		return nil
	}
	return cm.Data
}

// Secret is argocd-secret's data, or none.
func (c *Config) Secret() map[string][]byte {
	s, err := c.secrets.Secrets(c.ns).Get(SecretName)
	if err != nil {
		return nil
	}
	return s.Data
}
