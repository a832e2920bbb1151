package regionlive

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ferry-gitops/ferry/internal/app"
)

// readConcurrency is how many requests one tree sends at once: an app of
// hundreds of objects is read in a few round trips' time, not hundreds.
const readConcurrency = 16

// listMin is how many objects of one kind in one namespace a tree reads
// with one LIST of that kind there rather than a GET each. An app's
// ConfigMaps, Services and Deployments usually share its namespace: one
// request instead of a hundred, and a few of them cost about what their
// GETs do; a kind with fewer objects of the app's is read by name, so
// that a namespace holding many others is not listed for one or two.
const listMin = 4

// readGroup is the objects of one kind and version in one namespace.
type readGroup struct {
	gk                 schema.GroupKind
	version, namespace string
}

// readAll reads the objects of keys, in their order: nil for one that does
// not exist, and for each the error of its read. The keys of a readGroup
// of listMin or more in a namespace are read with one LIST (a GET each
// when the list fails, so that a user allowed to get but not to list
// still reads them, each with its own error); the others with a GET each.
// Keys without a namespace are read by name: were their kind namespaced,
// its list would hold every namespace's.
func (r *Region) readAll(ctx context.Context, keys []app.ResourceKey) ([]*unstructured.Unstructured, []error) {
	objs, errs := make([]*unstructured.Unstructured, len(keys)), make([]error, len(keys))
	groups := map[readGroup][]int{}
	var order []readGroup
	for i, k := range keys {
		g := readGroup{gk: schema.GroupKind{Group: k.Group, Kind: k.Kind}, version: k.Version, namespace: k.Namespace}
		if groups[g] == nil {
			order = append(order, g)
		}
		groups[g] = append(groups[g], i)
	}
	get := func(i int) { objs[i], errs[i] = r.Get(ctx, keys[i]) }
	var lists, gets []readGroup
	for _, g := range order {
		if len(groups[g]) >= listMin && g.namespace != "" {
			lists = append(lists, g)
		} else {
			gets = append(gets, g)
		}
	}
	var eg errgroup.Group
	eg.SetLimit(readConcurrency)
	listed := make([]bool, len(lists))
	for l, g := range lists { // first: a list takes longer than a GET
		eg.Go(func() error { listed[l] = r.listInto(ctx, g, groups[g], keys, objs, errs); return nil })
	}
	for _, g := range gets {
		for _, i := range groups[g] {
			eg.Go(func() error { get(i); return nil })
		}
	}
	_ = eg.Wait() // each read's error is in errs
	for l, g := range lists {
		if !listed[l] {
			for _, i := range groups[g] {
				eg.Go(func() error { get(i); return nil })
			}
		}
	}
	_ = eg.Wait()
	return objs, errs
}

// listInto lists g and sets, for each of idx, its key's object (nil when
// the list does not hold it) and error. An error mapping the kind is each
// key's, as a GET of it would answer; it answers false when the list
// itself failed, and sets nothing.
func (r *Region) listInto(ctx context.Context, g readGroup, idx []int, keys []app.ResourceKey, objs []*unstructured.Unstructured, errs []error) bool {
	ri, err := r.resource(g.gk, g.version, g.namespace)
	if err != nil {
		for _, i := range idx {
			errs[i] = err
		}
		return true
	}
	list, err := ri.List(ctx, metav1.ListOptions{})
	if err != nil {
		return false
	}
	byName := make(map[string]*unstructured.Unstructured, len(list.Items))
	for j := range list.Items {
		byName[list.Items[j].GetName()] = &list.Items[j]
	}
	for _, i := range idx {
		objs[i] = byName[keys[i].Name]
	}
	return true
}

// listChildren lists the objects of childKinds in namespaces, those that
// have an owner, by kind in childKinds' order then by namespace. The
// lists run at once.
func (r *Region) listChildren(ctx context.Context, namespaces []string) ([]*unstructured.Unstructured, error) {
	found := make([][]*unstructured.Unstructured, len(childKinds)*len(namespaces))
	failed := make([]error, len(found)+len(childKinds))
	var eg errgroup.Group
	eg.SetLimit(readConcurrency)
	for k, gk := range childKinds {
		if _, err := r.resource(gk, "", ""); err != nil {
			if !meta.IsNoMatchError(err) {
				failed[len(found)+k] = fmt.Errorf("list %s: %w", gk.Kind, err)
			}
			continue
		}
		for n, ns := range namespaces {
			slot := k*len(namespaces) + n
			eg.Go(func() error {
				ri, err := r.resource(gk, "", ns)
				if err == nil {
					var list *unstructured.UnstructuredList
					if list, err = ri.List(ctx, metav1.ListOptions{}); err == nil {
						for i := range list.Items {
							if len(list.Items[i].GetOwnerReferences()) > 0 {
								found[slot] = append(found[slot], &list.Items[i])
							}
						}
						return nil
					}
				}
				failed[slot] = fmt.Errorf("list %s in %s: %w", gk.Kind, ns, err)
				return nil
			})
		}
	}
	_ = eg.Wait() // each list's error is in failed
	return slices.Concat(found...), errors.Join(failed...)
}
