package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/ferry-gitops/ferry/internal/notify"
)

// Argo CD's names of the notifications ConfigMap and Secret.
const (
	notificationsConfigMap = "argocd-notifications-cm"
	notificationsSecret    = "argocd-notifications-secret"
)

// watchNotifications watches argocd-notifications-cm and
// argocd-notifications-secret in --notifications-namespace of the control
// cluster, so that an edit of either is used from the next evaluation or
// send on, without a restart. A ConfigMap that is invalid at start stops
// the worker, as a file does; an invalid edit later is logged and the
// config before it stays in use. A missing ConfigMap notifies nobody
// until it is created. Values of the Secret are never logged: only the
// names of the keys a service misses.
func watchNotifications(ctx context.Context, cfg *config) (*notify.Live, *notify.Secrets, error) {
	ns := cfg.notifications.namespace
	cs, err := controlClient(cfg, cfg.notifications.context)
	if err != nil {
		return nil, nil, err
	}
	live := &notify.Live{Where: fmt.Sprintf("ConfigMap %s in namespace %s", notificationsConfigMap, ns)}
	watched := &notify.WatchedSecret{Name: fmt.Sprintf("Secret %s in namespace %s", notificationsSecret, ns)}
	secrets := &notify.Secrets{Watched: watched}
	w := &notificationsWatch{live: live, secrets: secrets}

	secretCtl := informer(cs, "secrets", ns, notificationsSecret, &corev1.Secret{}, func(obj runtime.Object) {
		if s, _ := obj.(*corev1.Secret); s != nil {
			data := map[string]string{}
			for k, v := range s.Data {
				data[k] = string(v)
			}
			watched.Set(data)
		} else {
			watched.Set(nil)
		}
		w.checkSecrets()
	})
	cmCtl := informer(cs, "configmaps", ns, notificationsConfigMap, &corev1.ConfigMap{}, func(obj runtime.Object) {
		cm, _ := obj.(*corev1.ConfigMap)
		w.configMap(cm)
	})
	go secretCtl.RunWithContext(ctx)
	go cmCtl.RunWithContext(ctx)
	syncCtx, cancel := context.WithTimeout(ctx, repoCredsReadTimeout)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), secretCtl.HasSynced, cmCtl.HasSynced) {
		return nil, nil, fmt.Errorf("cannot list ConfigMap %s and Secret %s within %s: can the worker list and watch ConfigMaps and Secrets there?",
			notificationsConfigMap, notificationsSecret, repoCredsReadTimeout)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.started = true
	if w.startErr != nil {
		return nil, nil, w.startErr
	}
	w.checkSecretsLocked()
	if live.Current() == nil {
		slog.Warn("notifications: no config yet; apps are notified once it is created", "configMap", live.Where)
	}
	return live, secrets, nil
}

// informer runs onChange with the named object of the namespace whenever
// it is created or changes, and with nil when it is deleted.
func informer(cs kubernetes.Interface, resource, ns, name string, typ runtime.Object, onChange func(runtime.Object)) cache.Controller {
	lw := cache.NewListWatchFromClient(cs.CoreV1().RESTClient(), resource, ns, fields.OneTermEqualSelector("metadata.name", name))
	_, ctl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    typ,
		ResyncPeriod:  0,
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { onChange(obj.(runtime.Object)) },
			UpdateFunc: func(_, obj any) { onChange(obj.(runtime.Object)) },
			DeleteFunc: func(any) { onChange(nil) },
		},
	})
	return ctl
}

// notificationsWatch applies what the informers see.
type notificationsWatch struct {
	live    *notify.Live
	secrets *notify.Secrets

	mu sync.Mutex
	// started: the worker runs; before, an invalid ConfigMap is startErr.
	started  bool
	startErr error
}

// configMap reads the ConfigMap (nil: deleted) into the live config.
func (w *notificationsWatch) configMap(cm *corev1.ConfigMap) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if cm == nil {
		w.live.Set(nil)
		slog.Warn("notifications: the config was deleted; apps are notified again once it is created", "configMap", w.live.Where)
		return
	}
	c, err := notify.FromData(cm.Data)
	if err != nil {
		if !w.started {
			w.startErr = fmt.Errorf("%s: %w", w.live.Where, err)
			return
		}
		slog.Error("notifications: the edited config is refused; the one before it stays in use",
			"configMap", w.live.Where, "resourceVersion", cm.ResourceVersion, "error", err)
		return
	}
	w.startErr = nil
	w.live.Set(c)
	slog.Info("notifications: config read", "configMap", w.live.Where, "resourceVersion", cm.ResourceVersion,
		"services", c.Services())
	w.checkSecretsLocked()
}

func (w *notificationsWatch) checkSecrets() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.checkSecretsLocked()
}

// checkSecretsLocked warns of $secret references nothing resolves (the
// names of the keys, never a value).
func (w *notificationsWatch) checkSecretsLocked() {
	if !w.started {
		return
	}
	if err := w.live.Current().CheckSecrets(w.secrets); err != nil {
		slog.Warn("notifications: a service cannot be sent through until its secrets exist", "error", err)
	}
}
