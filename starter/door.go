package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The commands below go through ferry-server once the user logged in
// (ferry login): the server decides with the user's rights. Every other
// command needs Temporal directly, and says so (notThroughDoor).

// door is the API of the login in use, or nil when there is none.
func door() (*api, error) {
	sc, err := loggedIn()
	if err != nil || sc == nil {
		return nil, err
	}
	return newAPI(sc), nil
}

// notThroughDoor is the error of a command that needs Temporal while the
// user is logged in to a server.
func notThroughDoor(sc *serverContext) error {
	return fmt.Errorf("this command talks to Temporal directly, and you are logged in to %s, which does not offer it yet: run ferry logout first to use Temporal (operators only)",
		sc.Server)
}

// doorView is the app's view, as the server shows it.
func doorView(ctx context.Context, a *api, name string, query url.Values) (*contract.View, error) {
	path, q := appPath(name, "")
	for k, v := range query {
		q[k] = v
	}
	var v contract.View
	if err := a.do(ctx, "GET", path, q, nil, &v); err != nil {
		return nil, fmt.Errorf("app %q: %w", name, err)
	}
	return &v, nil
}

// doorSync sends a sync (or a rollback) and, with wait, follows the
// operation until it ends.
func doorSync(ctx context.Context, a *api, out io.Writer, name string, req contract.SyncRequest, wait bool) error {
	path, q := appPath(name, "/sync")
	var body any = syncBody(req)
	if req.RollbackID != nil {
		path, _ = appPath(name, "/rollback")
		body = map[string]any{"id": strconv.FormatInt(*req.RollbackID, 10), "dryRun": req.DryRun, "prune": req.Prune}
	}
	var v contract.View
	if err := a.do(ctx, "POST", path, q, body, &v); err != nil {
		return fmt.Errorf("app %q: sync: %w", name, err)
	}
	op := v.Status.OperationState
	if op == nil {
		return fmt.Errorf("app %q: the server started no operation", name)
	}
	if !wait {
		fmt.Fprintf(out, "sync of %q started (operation %s): follow it with ferry app get %s\n", name, op.ID, name)
		return nil
	}
	for operationRunning(op) {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(time.Second):
		}
		next, err := doorView(ctx, a, name, nil)
		if err != nil {
			return err
		}
		if next.Status.OperationState == nil || next.Status.OperationState.ID != op.ID {
			return fmt.Errorf("app %q: operation %s is no longer the app's: see ferry app get %s", name, op.ID, name)
		}
		op = next.Status.OperationState
	}
	fmt.Fprintf(out, "operation %s: %s: %s (revision %s)\n", op.ID, op.Phase, op.Message, short(op.Revision))
	printResults(out, op.Results)
	if op.Phase != app.OperationSucceeded {
		return fmt.Errorf("app %q: sync %s: %s", name, op.Phase, op.Message)
	}
	return nil
}

// syncBody is req as Argo CD's ApplicationSyncRequest.
func syncBody(req contract.SyncRequest) map[string]any {
	b := map[string]any{"revision": req.Revision, "prune": req.Prune, "dryRun": req.DryRun}
	if len(req.Resources) > 0 {
		b["resources"] = req.Resources
	}
	if req.Force {
		b["strategy"] = map[string]any{"apply": map[string]any{"force": true}}
	}
	if req.ApplyOutOfSyncOnly {
		b["syncOptions"] = map[string]any{"items": []string{"ApplyOutOfSyncOnly=true"}}
	}
	if req.Retry != nil {
		b["retryStrategy"] = req.Retry
	}
	if len(req.Info) > 0 {
		b["infos"] = req.Info
	}
	return b
}

// doorList lists the apps the server shows the user.
func doorList(ctx context.Context, a *api, out io.Writer, output string, sel labels.Selector) error {
	var list struct{ Items []*contract.View }
	if err := a.do(ctx, "GET", "/api/v1/applications", url.Values{"selector": {sel.String()}}, nil, &list); err != nil {
		return fmt.Errorf("list the apps: %w", err)
	}
	apps := make([]*listedApp, len(list.Items))
	for i, v := range list.Items {
		name := v.Metadata.Name
		if v.Metadata.Namespace != "" && v.Metadata.Namespace != a.sc.ControlNamespace {
			name = app.QualifiedName(v.Metadata.Namespace, name)
		}
		apps[i] = &listedApp{name: name, view: v, summary: summaryOf(name, v)}
	}
	slices.SortFunc(apps, func(x, y *listedApp) int { return strings.Compare(x.name, y.name) })
	return printApps(out, apps, output)
}

// summaryOf is the list's row of a view.
func summaryOf(name string, v *contract.View) contract.Summary {
	s := contract.Summary{App: name, RepoURL: v.PrimaryRepoURL(), Sync: string(v.Status.Sync.Status),
		Health: string(v.Status.Health.Status), Revision: v.Status.Sync.Revision, Project: v.Spec.Project}
	for r := range v.Status.Regions {
		s.Regions = append(s.Regions, r)
	}
	slices.Sort(s.Regions)
	if op := v.Status.OperationState; op != nil {
		s.Operation = string(op.Phase)
	}
	return s
}

// throughDoor runs viaDoor once the user logged in to a ferry-server, else
// direct.
func throughDoor(direct func() error, viaDoor func(a *api) error) error {
	a, err := door()
	switch {
	case err != nil:
		return err
	case a != nil:
		return viaDoor(a)
	}
	return direct()
}

// Why a flag of the direct path cannot go through ferry-server, and what to
// do instead.
const (
	serverReadsRegions = "is not read when you are logged in: ferry-server reads the regions through its own kubeconfig; drop it (or ferry logout to read them through yours, operators only)"
	serverReadsConfig  = "is read by ferry-server from argocd-cm when you are logged in: drop it"
	serverHasManifests = "is not used when you are logged in: ferry-server shows the manifests the workers rendered; drop it"
)

// refuseFlags is the error of the flags set on cmd that ferry-server
// cannot honour, each with why (a value of refused, by flag name).
func refuseFlags(cmd *cobra.Command, refused map[string]string) error {
	var errs []error
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if why, ok := refused[fl.Name]; ok {
			errs = append(errs, fmt.Errorf("--%s %s", fl.Name, why))
		}
	})
	return errors.Join(errs...)
}

// regionQuery is ?region= for each of regions.
func regionQuery(q url.Values, regions []string) url.Values {
	for _, r := range regions {
		q.Add("region", r)
	}
	return q
}
