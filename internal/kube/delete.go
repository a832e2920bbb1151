package kube

import (
	"context"
	"errors"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	"github.com/ferry-gitops/ferry/internal/app"
)

// Delete deletes the objects named by keys that are appName's (by tracking
// id), with background propagation, and returns the keys it deleted. An
// object that is missing or not the app's is skipped. It returns once the
// deletes are issued: poll Remaining to see them go.
func (c *Cluster) Delete(ctx context.Context, appName string, keys []app.ResourceKey) ([]app.ResourceKey, error) {
	if err := validAppName(appName); err != nil {
		return nil, err
	}
	objs, errs := c.getTracked(ctx, appName, keys)
	changes, derrs := c.deleteObjects(ctx, objs, false, "delete")
	return deletedKeys(changes), objectErrors(append(errs, derrs...))
}

// DeleteAll deletes every object of appName among the kinds gvks (their
// versions are ignored) or, with none given, among every kind the cluster
// serves that can be listed and deleted: what an Application's cascading
// deletion needs. It returns the keys it deleted once the deletes are
// issued. Kinds whose API group cannot be discovered are skipped and
// reported in the error, so the caller retries.
func (c *Cluster) DeleteAll(ctx context.Context, appName string, gvks ...schema.GroupVersionKind) ([]app.ResourceKey, error) {
	if err := validAppName(appName); err != nil {
		return nil, err
	}
	var kinds []schema.GroupKind
	var discoveryErr error
	if len(gvks) == 0 {
		kinds, discoveryErr = c.deletableKinds()
	} else {
		for _, gvk := range gvks {
			kinds = append(kinds, gvk.GroupKind())
		}
	}
	objs, errs := c.listTracked(ctx, appName, kinds)
	changes, derrs := c.deleteObjects(ctx, objs, false, "delete")
	err := objectErrors(append(errs, derrs...))
	return deletedKeys(changes), errors.Join(discoveryErr, err)
}

// Remaining returns the keys whose objects still exist and are appName's:
// poll it after Delete or DeleteAll until it is empty.
func (c *Cluster) Remaining(ctx context.Context, appName string, keys []app.ResourceKey) ([]app.ResourceKey, error) {
	objs, errs := c.getTracked(ctx, appName, keys)
	out := make([]app.ResourceKey, len(objs))
	for i, o := range objs {
		out[i] = KeyOf(o)
	}
	return out, objectErrors(errs)
}

// getTracked gets the objects named by keys, keeping those that exist and
// are appName's, in the order of keys.
func (c *Cluster) getTracked(ctx context.Context, appName string, keys []app.ResourceKey) ([]*unstructured.Unstructured, []*ObjectError) {
	found := make([]*unstructured.Unstructured, len(keys))
	failures := make([]*ObjectError, len(keys))
	runLimited(c.opts.Concurrency, len(keys), func(i int) {
		key := keys[i]
		m, err := c.mapping(schema.GroupVersionKind{Group: key.Group, Version: key.Version, Kind: key.Kind})
		if err != nil && key.Version != "" {
			// The version may no longer be served; any version names the object.
			m, err = c.mapping(schema.GroupVersionKind{Group: key.Group, Kind: key.Kind})
		}
		if err != nil {
			if !meta.IsNoMatchError(err) {
				failures[i] = newObjectError(key, "get", err)
			}
			return
		}
		obj, err := c.resource(m, key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			failures[i] = newObjectError(key, "get", err)
		case IsTracked(appName, obj):
			found[i] = obj
		}
	})
	var objs []*unstructured.Unstructured
	var errs []*ObjectError
	for i := range keys {
		if found[i] != nil {
			objs = append(objs, found[i])
		}
		if failures[i] != nil {
			errs = append(errs, failures[i])
		}
	}
	return objs, errs
}

// deletableKinds returns every kind the cluster serves that supports list
// and delete, from fresh discovery.
func (c *Cluster) deletableKinds() ([]schema.GroupKind, error) {
	c.mapper.Reset()
	lists, err := c.discovery.ServerPreferredResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, err
	}
	lists = discovery.FilteredBy(discovery.SupportsAllVerbs{Verbs: []string{"list", "delete"}}, lists)
	var kinds []schema.GroupKind
	seen := map[schema.GroupKind]bool{}
	for _, l := range lists {
		gv, perr := schema.ParseGroupVersion(l.GroupVersion)
		if perr != nil {
			continue
		}
		for _, r := range l.APIResources {
			gk := schema.GroupKind{Group: gv.Group, Kind: r.Kind}
			if strings.Contains(r.Name, "/") || seen[gk] {
				continue // a subresource, or a kind seen in another version
			}
			seen[gk] = true
			kinds = append(kinds, gk)
		}
	}
	return kinds, err
}

func deletedKeys(changes []Change) []app.ResourceKey {
	var keys []app.ResourceKey
	for _, ch := range changes {
		if ch.Action != ActionFailed {
			keys = append(keys, ch.Key)
		}
	}
	return keys
}
