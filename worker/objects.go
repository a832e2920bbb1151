package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/ferry-gitops/ferry/activities"
	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/appobjects"
)

// objectFlags: the control cluster whose Application objects are apps.
type objectFlags struct {
	namespace, context, appNamespaces string
}

func (f *objectFlags) check() error {
	list := splitList(f.appNamespaces)
	if len(list) > 0 && f.namespace == "" {
		return errors.New("--app-namespaces lists namespaces besides the control namespace: give --control-namespace too")
	}
	var errs []error
	for _, pattern := range list {
		if msg := app.NamespacePatternProblem("--app-namespaces", pattern); msg != "" {
			errs = append(errs, fmt.Errorf("--app-namespaces: %s", msg))
		}
	}
	return errors.Join(errs...)
}

// objectParts are what a control worker given --control-namespace runs:
// the controller of the Application objects, the worker of the queue on
// which apps write their status to them, and the objects apps of apps
// write their children as.
type objectParts struct {
	controller *appobjects.Controller
	worker     worker.Worker
	children   *appobjects.Children
}

// newObjects builds the objectParts; all nil without the flag.
func newObjects(cfg *config, c client.Client, opts worker.Options) (objectParts, error) {
	if !cfg.control || cfg.objects.namespace == "" {
		return objectParts{}, nil
	}
	rc, err := controlConfig(cfg, cfg.objects.context)
	if err != nil {
		return objectParts{}, fmt.Errorf("control cluster (--control-context %q): %w", cfg.objects.context, err)
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return objectParts{}, err
	}
	kube, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return objectParts{}, err
	}
	objects := &appobjects.Objects{Client: dyn, Validate: app.ValidateOptions{Regions: cfg.regionsCfg}}
	w := worker.New(c, contract.ObjectQueue, opts)
	(&activities.ObjectStatus{Client: c, Objects: objects}).Register(w)
	host, _ := os.Hostname()
	ctl := &appobjects.Controller{Objects: objects, Kube: kube, Namespace: cfg.objects.namespace, AppNamespaces: splitList(cfg.objects.appNamespaces),
		Apps: &objectApps{c: c}, Definitions: &objectDefinitions{c: c}, Identity: fmt.Sprintf("%s-%d", host, os.Getpid())}
	return objectParts{controller: ctl, worker: w, children: &appobjects.Children{Client: dyn, Namespace: cfg.objects.namespace}}, nil
}

// objectApps is appobjects.Apps over the apps' workflows.
type objectApps struct{ c client.Client }

// deleteWait: how long a delete is waited for before the controller looks
// again; a cascade may take minutes.
const deleteWait = 10 * time.Second

func (t *objectApps) Apply(ctx context.Context, a *app.Application, object string) error {
	by := contract.SpecRequest{Object: object}
	started, err := ferryclient.StartNew(ctx, t.c, a, by)
	if err == nil && !started {
		_, err = ferryclient.Apply(ctx, t.c, a, by)
	}
	return refusal(err)
}

func (t *objectApps) Sync(ctx context.Context, name, object string, op *appobjects.Operation) error {
	s := op.Sync
	req := contract.SyncRequest{Revision: s.Revision, Prune: s.Prune, DryRun: s.DryRun, Resources: s.Resources,
		Force: s.SyncStrategy.Force(), ApplyOutOfSyncOnly: s.ApplyOutOfSyncOnly(), Retry: op.Retry, Info: op.Info,
		InitiatedBy: op.InitiatedBy}
	handle, err := ferryclient.Sync(ctx, t.c, name, req, client.WorkflowUpdateStageAccepted)
	if err != nil {
		return refusal(err)
	}
	// A rejected update is answered at once, through its handle; an
	// accepted one runs on and answers when its operation ends.
	gctx, cancel := context.WithTimeout(ctx, syncAnswerWait)
	defer cancel()
	if err := handle.Get(gctx, nil); err != nil && gctx.Err() == nil {
		return refusal(err)
	}
	return nil
}

// syncAnswerWait: how long Sync looks for the answer of a rejected sync.
const syncAnswerWait = 2 * time.Second

func (t *objectApps) Refresh(ctx context.Context, name string, hard bool) error {
	err := t.c.SignalWorkflow(ctx, contract.WorkflowID(name), "", contract.SignalRefresh, contract.RefreshRequest{Hard: hard})
	return refusal(err)
}

func (t *objectApps) Delete(ctx context.Context, name, object string, cascade bool, propagation string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, deleteWait)
	defer cancel()
	out, err := ferryclient.DeleteApp(ctx, t.c, name, contract.DeleteRequest{Cascade: &cascade, Propagation: propagation, Object: object})
	switch {
	case err == nil:
		return out.Waiting == "", nil
	case ferryclient.IsAppNotFound(err):
		return true, nil
	case errors.Is(ctx.Err(), context.DeadlineExceeded), contract.ErrorMessage(err) == contract.ErrDeleting.Error():
		return false, nil // under way
	}
	return false, refusal(err)
}

func (t *objectApps) Owned(ctx context.Context) (map[string]string, error) {
	owned := map[string]string{}
	err := ferryclient.ListApps(ctx, t.c, func(name string, s contract.Summary) {
		if s.Namespace != "" {
			owned[name] = s.Namespace
		}
	})
	return owned, err
}

// refusal marks the errors no retry changes: an app's validator or owner
// refused the request, its project does not allow it, or it is gone.
func refusal(err error) error {
	var (
		ae *temporal.ApplicationError
		pe *app.ProjectError
		nf *contract.ProjectNotFoundError
		sn *app.SourceNamespaceError
	)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ae), errors.As(err, &pe), errors.As(err, &nf), errors.As(err, &sn), ferryclient.IsAppNotFound(err):
		return &appobjects.Refused{Err: errors.New(contract.ErrorMessage(err))}
	}
	slog.Debug("applications: request failed", "error", err)
	return err
}
