package main

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/customize"
)

// `ferry app actions` through ferry-server: the objects come from the
// app's view, as the direct path takes them from the status query; the
// server lists and runs the actions with the user's rights (applications
// action/GROUP/KIND/ACTION) and its argocd-cm's Lua actions.

var actionsRefused = map[string]string{"kubeconfig": serverReadsRegions, "resource-customizations": serverReadsConfig}

// doorActionTargets are the app's objects the flags name, by region, from
// the app's view.
func doorActionTargets(cmd *cobra.Command, a *api, f *actionFlags, name string) ([]string, map[string][]app.ResourceKey, error) {
	if err := refuseFlags(cmd, actionsRefused); err != nil {
		return nil, nil, err
	}
	v, err := doorView(cmd.Context(), a, name, nil)
	if err != nil {
		return nil, nil, err
	}
	return f.targetsOf(v, name)
}

// actionQuery names k in region as the server's action paths take it.
func actionQuery(region string, k app.ResourceKey) url.Values {
	return url.Values{"region": {region}, "namespace": {k.Namespace}, "resourceName": {k.Name}, "kind": {k.Kind}, "group": {k.Group}}
}

// doorListActions asks the server for the actions of each object the flags
// name, one call an object and region.
func doorListActions(cmd *cobra.Command, a *api, f *actionFlags, name string) error {
	order, byRegion, err := doorActionTargets(cmd, a, f, name)
	if err != nil {
		return err
	}
	path, q := appPath(name, "/resource/actions")
	tw := actionsTable(cmd.OutOrStdout())
	var errs []error
	for _, region := range order {
		for _, k := range byRegion[region] {
			query := actionQuery(region, k)
			for key, v := range q {
				query[key] = v
			}
			var got struct{ Actions []customize.Action }
			if err := a.do(cmd.Context(), "GET", path, query, nil, &got); err != nil {
				errs = append(errs, fmt.Errorf("region %s: %s %s: %w", region, kindOf(k), objectName(k), err))
				continue
			}
			printActions(tw, region, k, got.Actions)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return errors.Join(errs...)
}

// doorRunAction runs the action through the server on the one object the
// flags name in each region.
func doorRunAction(cmd *cobra.Command, a *api, f *actionFlags, name, action string, params map[string]string) error {
	order, byRegion, err := doorActionTargets(cmd, a, f, name)
	if err != nil {
		return err
	}
	type param struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	var ps []param
	for k, v := range params {
		ps = append(ps, param{k, v})
	}
	slices.SortFunc(ps, func(x, y param) int { return strings.Compare(x.Name, y.Name) })
	path, q := appPath(name, "/resource/actions/v2")
	var errs []error
	for _, region := range order {
		k, err := f.oneTarget(name, region, byRegion[region])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		body := map[string]any{"action": action, "kind": k.Kind, "group": k.Group, "namespace": k.Namespace, "resourceName": k.Name,
			"resourceActionParameters": ps}
		var got struct {
			Results []struct {
				Region                       string
				Group, Kind, Namespace, Name string
				Done                         []string
			}
		}
		if err := a.do(cmd.Context(), "POST", path, regionQuery(maps.Clone(q), []string{region}), body, &got); err != nil {
			errs = append(errs, fmt.Errorf("app %q: action %q on %s %s in region %s: %w", name, action, kindOf(k), objectName(k), region, err))
			continue
		}
		for _, r := range got.Results {
			printActionDone(cmd.OutOrStdout(), r.Region, action,
				app.ResourceKey{Group: r.Group, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}, r.Done)
		}
	}
	return errors.Join(errs...)
}
