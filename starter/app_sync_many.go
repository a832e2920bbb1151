package main

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
)

// appSelection is argocd app sync's choice of many apps: -l SELECTOR
// (their metadata.labels, as ferry app list -l) and --project, repeatable.
type appSelection struct {
	selector string
	projects []string
}

func (s *appSelection) register(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&s.selector, "selector", "l", "", "sync every app whose labels match, as ferry app list -l, e.g. team=payments,env!=dev")
	cmd.Flags().StringArrayVar(&s.projects, "project", nil, "sync every app of this project; repeatable")
}

func (s *appSelection) set() bool { return s.selector != "" || len(s.projects) > 0 }

// names are the apps the selection matches, sorted: through ferry-server
// once logged in, else from Temporal.
func (s *appSelection) names(ctx context.Context, tf *temporalFlags) ([]string, error) {
	sel, err := labels.Parse(s.selector)
	if err != nil {
		return nil, fmt.Errorf("--selector %q: %w: write key=value, key!=value, key in (a,b) or key, separated by commas", s.selector, err)
	}
	var views []*contract.View
	if a, err := door(); err != nil {
		return nil, err
	} else if a != nil {
		var list struct{ Items []*contract.View }
		if err := a.do(ctx, "GET", "/api/v1/applications", url.Values{"selector": {sel.String()}, "projects": s.projects}, nil, &list); err != nil {
			return nil, fmt.Errorf("list the apps: %w", err)
		}
		views = list.Items
		for _, v := range views {
			if v.Metadata.Namespace != "" && v.Metadata.Namespace != a.sc.ControlNamespace {
				v.Metadata.Name = app.QualifiedName(v.Metadata.Namespace, v.Metadata.Name)
			}
		}
	} else {
		c, err := tf.dial(ctx)
		if err != nil {
			return nil, err
		}
		defer c.Close()
		if views, err = allViews(ctx, c); err != nil {
			return nil, err
		}
	}
	var names []string
	for _, v := range views {
		if sel.Matches(labels.Set(v.Metadata.Labels)) && (len(s.projects) == 0 || slices.Contains(s.projects, v.ProjectOf())) {
			names = append(names, v.Metadata.Name)
		}
	}
	slices.Sort(names)
	return names, nil
}

// allViews are the views of every running app.
func allViews(ctx context.Context, c client.Client) ([]*contract.View, error) {
	var apps []*listedApp
	err := ferryclient.ListApps(ctx, c, func(name string, s contract.Summary) {
		apps = append(apps, &listedApp{name: name, summary: s})
	})
	if err != nil {
		return nil, err
	}
	apps, err = queryViews(ctx, c, apps)
	views := make([]*contract.View, len(apps))
	for i, a := range apps {
		views[i] = a.view
		views[i].Metadata.Name = a.name
	}
	return views, err
}

// syncMany syncs each app in turn, as argocd app sync -l does, and goes
// on past a failure; the failures are summed up at the end.
func syncMany(cmd *cobra.Command, names []string, sync func(name string) error) error {
	total := len(names)
	var failed []string
	var last error
	for _, name := range names {
		if err := sync(name); err != nil {
			if len(names) > 1 {
				fmt.Fprintln(cmd.ErrOrStderr(), "ferry:", err)
			}
			failed, last = append(failed, name), err
		}
	}
	switch {
	case len(failed) == 0:
		return nil
	case total == 1:
		return last
	}
	names = failed[:min(len(failed), maxFailedNames)]
	more := ""
	if n := len(failed) - len(names); n > 0 {
		more = fmt.Sprintf(" and %d more", n)
	}
	return fmt.Errorf("%d of %d syncs failed (%s%s): each one's error is above; the others were synced", len(failed), total, strings.Join(names, ", "), more)
}
