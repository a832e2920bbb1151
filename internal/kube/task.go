package kube

import (
	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// task is one desired object on its way to the cluster: a tracked copy,
// placed in its namespace, with its mapping, and what became of it.
type task struct {
	app     string
	obj     *unstructured.Unstructured
	key     app.ResourceKey
	mapping *meta.RESTMapping
	// change is set by a successful apply; err by any failure.
	change Change
	err    *ObjectError
}

// prepare turns desired objects into tasks: copies them, places them,
// marks them as appName's. An object that cannot be mapped, has no name or
// appears twice gets its error here and is not sent.
func (c *Cluster) prepare(appName, defaultNS string, objs []*unstructured.Unstructured) []*task {
	tasks := make([]*task, len(objs))
	seen := map[app.ResourceKey][]*task{}
	for i, src := range objs {
		t := &task{app: appName, obj: src.DeepCopy()}
		tasks[i] = t
		m, err := c.place(t.obj, defaultNS)
		t.key = KeyOf(t.obj)
		switch {
		case err != nil:
			t.err = newObjectError(t.key, "map", err)
			continue
		case t.obj.GetName() == "":
			t.err = newObjectError(t.key, "apply", invalidf("object has no metadata.name"))
			continue
		}
		t.mapping = m
		track(appName, t.obj)
		id := identity(t.key)
		seen[id] = append(seen[id], t)
	}
	for _, dups := range seen {
		if len(dups) < 2 {
			continue
		}
		for _, t := range dups {
			t.err = newObjectError(t.key, "apply", invalidf("the desired state has this object %d times", len(dups)))
		}
	}
	return tasks
}

// runLimited calls fn(0..n-1) with at most limit calls at a time and waits
// for all of them. fn records its own failures: one does not stop others.
func runLimited(limit, n int, fn func(i int)) {
	var g errgroup.Group
	g.SetLimit(limit)
	for i := 0; i < n; i++ {
		g.Go(func() error {
			fn(i)
			return nil
		})
	}
	_ = g.Wait()
}
