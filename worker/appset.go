package main

import (
	"context"
	"strings"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/appset"
	"github.com/ferry-gitops/ferry/internal/webhook"
)

// appSetClusters are the regions as the clusters generator yields them.
func appSetClusters(cfg *config) []appset.Cluster { return appset.ClustersOf(cfg.regionsCfg) }

// appSetWebhookPrefix marks the ApplicationSets among the webhook's "apps":
// an app's name has no '/', a set's workflow ID has.
var appSetWebhookPrefix = contract.AppSetWorkflowID("")

// appSetsOfRepos lists the running sets as the webhook's apps, one entry
// per repository of their git generators.
func appSetsOfRepos(ctx context.Context, a temporalApps) ([]webhook.App, error) {
	sets, err := ferryclient.ListAppSets(ctx, a.client)
	if err != nil {
		return nil, err
	}
	var out []webhook.App
	for _, s := range sets {
		for _, repo := range s.Repos {
			out = append(out, webhook.App{Name: contract.AppSetWorkflowID(s.Name), RepoURL: repo})
		}
	}
	return out, nil
}

// appSetOf is the set a webhook "app" names, if it is one.
func appSetOf(name string) (string, bool) { return strings.CutPrefix(name, appSetWebhookPrefix) }
