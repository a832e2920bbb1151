package syncplan

import (
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Plan is the Sync phase of one sync: its waves in order. It refers to the
// objects given to Build by their index.
type Plan struct {
	// Waves in the order they run: ascending for an apply, descending for
	// a prune.
	Waves []Wave
	// Hooks are the indexes of the hook objects, which the plan leaves to
	// the hook runner.
	Hooks []int
}

// Wave is one sync wave.
type Wave struct {
	// Number is the wave's sync-wave value.
	Number int
	// Steps run one after the other; the objects of a step (one kind, or
	// every custom kind together) do not depend on each other and may be
	// applied in parallel.
	Steps [][]int
}

// Len is the number of objects in the plan's waves.
func (p Plan) Len() int {
	n := 0
	for _, w := range p.Waves {
		for _, s := range w.Steps {
			n += len(s)
		}
	}
	return n
}

// Error is a problem with the object at Index: it is left out of the plan.
type Error struct {
	Index int
	Err   error
}

func (e Error) Error() string { return e.Err.Error() }
func (e Error) Unwrap() error { return e.Err }

// Build plans the apply of objs: hooks aside, then by wave, kind order and
// name, with Namespaces and CRDs moved to the first wave that needs them.
// Objects whose wave cannot be read are left out and reported.
func Build(objs []*unstructured.Unstructured) (Plan, []Error) {
	waves, plan, errs := read(objs)
	lift(objs, waves)
	plan.Waves = group(objs, waves, false)
	return plan, errs
}

// BuildPrune plans the deletion of objs (live objects no longer desired):
// the highest wave first, and within a wave the reverse of the apply
// order, so that what others depend on goes last. An unreadable wave counts
// as 0: it must not keep an object from being pruned.
func BuildPrune(objs []*unstructured.Unstructured) Plan {
	waves := map[int]int{}
	var plan Plan
	for i, o := range objs {
		if IsHook(o) {
			plan.Hooks = append(plan.Hooks, i)
			continue
		}
		w, _ := WaveOf(o)
		waves[i] = w
	}
	plan.Waves = group(objs, waves, true)
	return plan
}

// read splits hooks off and reads every other object's wave.
func read(objs []*unstructured.Unstructured) (map[int]int, Plan, []Error) {
	waves := map[int]int{}
	var plan Plan
	var errs []Error
	for i, o := range objs {
		if IsHook(o) {
			plan.Hooks = append(plan.Hooks, i)
			continue
		}
		w, err := WaveOf(o)
		if err != nil {
			errs = append(errs, Error{Index: i, Err: err})
			continue
		}
		waves[i] = w
	}
	return waves, plan, errs
}

// lift moves each Namespace and CRD of waves to the earliest wave of the
// objects that need it, when that is earlier than its own.
func lift(objs []*unstructured.Unstructured, waves map[int]int) {
	own := make(map[int]int, len(waves))
	for i, w := range waves {
		own[i] = w
	}
	for i := range own {
		gvk := objs[i].GroupVersionKind()
		switch {
		case IsNamespace(gvk.Group, gvk.Kind):
			name := objs[i].GetName()
			for j, w := range own {
				if j != i && objs[j].GetNamespace() == name && w < waves[i] {
					waves[i] = w
				}
			}
		case IsCRD(gvk.Group, gvk.Kind):
			group, _, _ := unstructured.NestedString(objs[i].Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(objs[i].Object, "spec", "names", "kind")
			for j, w := range own {
				g := objs[j].GroupVersionKind()
				if j != i && g.Group == group && g.Kind == kind && w < waves[i] {
					waves[i] = w
				}
			}
		}
	}
}

// group sorts the planned objects and cuts them into waves and steps;
// reverse gives the prune order.
func group(objs []*unstructured.Unstructured, waves map[int]int, reverse bool) []Wave {
	idx := make([]int, 0, len(waves))
	for i := range waves {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(a, b int) bool {
		if reverse {
			return applyLess(objs, waves, idx[b], idx[a])
		}
		return applyLess(objs, waves, idx[a], idx[b])
	})
	var out []Wave
	for n, i := range idx {
		w, order := waves[i], kindOrderOf(objs[i])
		if n == 0 || waves[idx[n-1]] != w {
			out = append(out, Wave{Number: w})
		}
		cur := &out[len(out)-1]
		if n == 0 || waves[idx[n-1]] != w || kindOrderOf(objs[idx[n-1]]) != order {
			cur.Steps = append(cur.Steps, nil)
		}
		cur.Steps[len(cur.Steps)-1] = append(cur.Steps[len(cur.Steps)-1], i)
	}
	return out
}

// applyLess is the apply order: wave, kind order, kind, name, namespace,
// group, then input order.
func applyLess(objs []*unstructured.Unstructured, waves map[int]int, i, j int) bool {
	if waves[i] != waves[j] {
		return waves[i] < waves[j]
	}
	a, b := objs[i], objs[j]
	if oa, ob := kindOrderOf(a), kindOrderOf(b); oa != ob {
		return oa < ob
	}
	ga, gb := a.GroupVersionKind(), b.GroupVersionKind()
	switch {
	case ga.Kind != gb.Kind:
		return ga.Kind < gb.Kind
	case a.GetName() != b.GetName():
		return a.GetName() < b.GetName()
	case a.GetNamespace() != b.GetNamespace():
		return a.GetNamespace() < b.GetNamespace()
	case ga.Group != gb.Group:
		return ga.Group < gb.Group
	}
	return i < j
}

func kindOrderOf(o *unstructured.Unstructured) int {
	gvk := o.GroupVersionKind()
	return KindOrder(gvk.Group, gvk.Kind)
}
