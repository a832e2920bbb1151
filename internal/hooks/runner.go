package hooks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/health"
	"github.com/ferry-gitops/ferry/internal/kube"
	"github.com/ferry-gitops/ferry/internal/syncplan"
)

// DefaultTimeout bounds a hook that sets no deadline of its own.
const DefaultTimeout = time.Hour

// Runner runs hooks in one cluster. Its zero durations take defaults.
type Runner struct {
	// Dynamic and Mapper are the cluster's clients (kube.Cluster has both).
	Dynamic dynamic.Interface
	Mapper  meta.RESTMapper
	// FieldManager creates the destination namespace (CreateNamespace);
	// "ferry", as the sync's, when empty.
	FieldManager string
	// Poll is how often a running hook is looked at; 1s when zero.
	Poll time.Duration
	// Timeout bounds a hook without activeDeadlineSeconds; DefaultTimeout
	// when zero.
	Timeout time.Duration
	// Progress, when set, hears what the run is doing every poll: an
	// activity heartbeats from it.
	Progress func(msg string)
	// Health tells a hook's health as the sync's compare does (the
	// cluster's checker, Lua health checks among them); its zero value is
	// the built-in checks.
	Health health.Checker
}

// Request is one phase's hooks (or one wave of them) in one cluster.
type Request struct {
	// App names the Application: hook objects carry its label and
	// tracking id.
	App string
	// Namespace is the destination namespace, for namespaced hooks that
	// name none.
	Namespace string
	// OperationID identifies the run: unique per operation (and attempt)
	// of an app, across the app's whole life.
	OperationID string
	Phase       app.HookType
	// Objects are the rendered objects; the hooks of Phase are taken from
	// them.
	Objects []*unstructured.Unstructured
	// Wave, when set, runs only the hooks of that wave.
	Wave *int
	// CreateNamespace creates Namespace first when it does not exist
	// (CreateNamespace=true): PreSync hooks run before the sync would.
	CreateNamespace bool
}

// Result is how one hook ended.
type Result struct {
	Key    app.ResourceKey
	Phase  app.HookType
	Wave   int
	Status Status
	// Message says why: the controller's or pod's reason, or the timeout.
	Message string
	// Delete: its delete policy wants the object gone now (Runner.Delete).
	Delete bool
}

// FailedError is a run in which a hook failed or timed out. Its results
// hold every hook run until then.
type FailedError struct {
	Results []Result
	msg     string
}

func (e *FailedError) Error() string { return e.msg }

// IsFailed tells whether err is a FailedError: the hook itself failed, and
// running it again in the same operation will not help.
func IsFailed(err error) bool {
	var fe *FailedError
	return errors.As(err, &fe)
}

// InvalidError is a hook that cannot be run as written (unreadable
// annotations, a name clash, an object in the way): a change is needed.
type InvalidError struct{ msg string }

func (e *InvalidError) Error() string { return e.msg }

// IsInvalid tells whether err is an InvalidError.
func IsInvalid(err error) bool {
	var ie *InvalidError
	return errors.As(err, &ie)
}

func invalidf(format string, args ...any) error {
	return &InvalidError{msg: fmt.Sprintf(format, args...)}
}

// Run creates the phase's hooks wave by wave, each wave once the one before
// it succeeded, and waits for every hook of a wave to end. It returns the
// results of the hooks run; a failed hook stops the run with a
// *FailedError. A run repeated with the same Request (after a crash) finds
// the objects it created and goes on waiting for them.
func (r *Runner) Run(ctx context.Context, req Request) ([]Result, error) {
	waves, err := r.plan(req)
	if err != nil || len(waves) == 0 {
		return nil, err
	}
	if req.CreateNamespace && req.Namespace != "" {
		if err := r.ensureNamespace(ctx, req.Namespace); err != nil {
			return nil, err
		}
	}
	var results []Result
	for _, wave := range waves {
		live := make([]*unstructured.Unstructured, len(wave))
		for i, h := range wave {
			if live[i], err = r.ensure(ctx, req, h); err != nil {
				return results, err
			}
		}
		done, err := r.wait(ctx, req, wave, live)
		results = append(results, done...)
		if err != nil {
			return results, err
		}
		var failed []string
		for _, res := range done {
			if res.Status != Succeeded {
				failed = append(failed, fmt.Sprintf("%s hook %s failed: %s", req.Phase, keyString(res.Key), res.Message))
			}
		}
		if len(failed) > 0 {
			return results, &FailedError{Results: results, msg: strings.Join(failed, "; ")}
		}
	}
	return results, nil
}

// planned is a hook with where its object goes.
type planned struct {
	Hook
	mapping *meta.RESTMapping
	key     app.ResourceKey
}

// plan picks the request's hooks, places them, and orders them in waves
// (ascending), within a wave by syncplan's kind order, then name.
func (r *Runner) plan(req Request) ([][]planned, error) {
	hs, err := Of(req.Objects)
	if err != nil {
		return nil, &InvalidError{msg: err.Error()}
	}
	var picked []planned
	seen := map[app.ResourceKey]string{}
	for _, h := range hs {
		if !h.In(req.Phase) || (req.Wave != nil && h.Wave != *req.Wave) {
			continue
		}
		gvk := h.Object.GroupVersionKind()
		m, err := r.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return nil, fmt.Errorf("%s hook %s: kind %s: %w", req.Phase, describe(h.Object), gvk.Kind, err)
		}
		ns := ""
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			if ns = h.Object.GetNamespace(); ns == "" {
				ns = req.Namespace
			}
			if ns == "" {
				return nil, invalidf("%s hook %s has no namespace and the destination names none", req.Phase, describe(h.Object))
			}
		}
		key := app.ResourceKey{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: ns,
			Name: Name(h.Object, req.OperationID, req.Phase)}
		id := key
		id.Version = ""
		if prev, dup := seen[id]; dup {
			return nil, invalidf("%s hooks %s and %s would both be %s: give them different names", req.Phase, prev, describe(h.Object), keyString(key))
		}
		seen[id] = describe(h.Object)
		picked = append(picked, planned{Hook: h, mapping: m, key: key})
	}
	sort.SliceStable(picked, func(i, j int) bool {
		a, b := picked[i], picked[j]
		if a.Wave != b.Wave {
			return a.Wave < b.Wave
		}
		if oa, ob := syncplan.KindOrder(a.key.Group, a.key.Kind), syncplan.KindOrder(b.key.Group, b.key.Kind); oa != ob {
			return oa < ob
		}
		return a.key.Name < b.key.Name
	})
	var waves [][]planned
	for i, p := range picked {
		if i == 0 || picked[i-1].Wave != p.Wave {
			waves = append(waves, nil)
		}
		waves[len(waves)-1] = append(waves[len(waves)-1], p)
	}
	return waves, nil
}

// wait polls the wave's hooks until each has ended, failed, or run out of
// time, and returns their results in the wave's order.
func (r *Runner) wait(ctx context.Context, req Request, wave []planned, live []*unstructured.Unstructured) ([]Result, error) {
	results := make([]Result, len(wave))
	pending := len(wave)
	err := kube.Poll(ctx, r.poll(), func(ctx context.Context) (bool, error) {
		var running []string
		for i, h := range wave {
			if results[i].Status != "" {
				continue
			}
			obj := live[i]
			if obj == nil {
				var err error
				if obj, err = r.get(ctx, h); err != nil {
					return false, err
				}
			}
			live[i] = nil
			res := Result{Key: h.key, Phase: req.Phase, Wave: h.Wave}
			switch {
			case obj == nil:
				res.Status, res.Message = Failed, "deleted while it ran"
			default:
				res.Status, res.Message = state(obj, r.Health)
				if res.Status == Failed {
					res.Message = r.failureReason(ctx, obj, res.Message)
				}
				limit := timeoutOf(obj, r.timeout())
				if res.Status == Running && time.Since(obj.GetCreationTimestamp().Time) > limit {
					res.Status, res.Message = Failed, fmt.Sprintf("did not finish within %s (%s); last seen: %s", limit, timeoutSource(obj), res.Message)
				}
			}
			if res.Status == Running {
				running = append(running, fmt.Sprintf("%s (%s)", keyString(h.key), res.Message))
				continue
			}
			res.Delete = (res.Status == Succeeded && h.Has(HookSucceeded)) || (res.Status == Failed && h.Has(HookFailed))
			results[i] = res
			pending--
		}
		if pending == 0 {
			return true, nil
		}
		r.progress(fmt.Sprintf("%s wave %d: waiting for %s", req.Phase, wave[0].Wave, strings.Join(running, ", ")))
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	return results, nil
}

func timeoutSource(obj *unstructured.Unstructured) string {
	if _, ok := deadlineSeconds(obj, "spec", "activeDeadlineSeconds"); ok {
		return "its activeDeadlineSeconds and a grace of " + deadlineGrace.String()
	}
	return "the default for hooks without activeDeadlineSeconds"
}

func (r *Runner) progress(msg string) {
	if r.Progress != nil {
		r.Progress(msg)
	}
}

func (r *Runner) poll() time.Duration {
	if r.Poll <= 0 {
		return time.Second
	}
	return r.Poll
}

func (r *Runner) timeout() time.Duration {
	if r.Timeout <= 0 {
		return DefaultTimeout
	}
	return r.Timeout
}

func (r *Runner) fieldManager() string {
	if r.FieldManager == "" {
		return "ferry"
	}
	return r.FieldManager
}

// keyString names an object in messages as kube does: Kind/namespace/name.
func keyString(k app.ResourceKey) string {
	parts := slices.DeleteFunc([]string{k.Kind, k.Namespace, k.Name}, func(s string) bool { return s == "" })
	return strings.Join(parts, "/")
}
