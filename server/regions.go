package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/singleflight"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/handover"
	"github.com/ferry-gitops/ferry/internal/manifests"
	"github.com/ferry-gitops/ferry/internal/regionlive"
	"github.com/ferry-gitops/ferry/internal/regions"
)

// The live-state APIs (resource-tree, managed-resources, manifests, a
// resource's events, logs, actions) read an app's regions as the ferry
// CLI does: through the kubeconfig context named after each region. The
// manifests of an app's target come from the control workers, handed over
// sealed to a key that lives only in this process, as a region worker of
// no control role gets them: the server renders nothing and reads no Git,
// and no manifest passes through a history in clear.
type regionAccess struct {
	config   *regions.Config
	clusters *regionlive.Regions
	keys     *handover.Keys
	// handed keeps the sets handed over, by digest.
	handed  *manifests.Memory
	flights singleflight.Group
}

// handedOverBytes bounds the sets the server keeps in memory.
const handedOverBytes = 128 << 20

func newRegionAccess(cfg *config) (*regionAccess, error) {
	rc, err := regions.Configure(cfg.regionsConfig, splitList(cfg.regions), cfg.inClusterRegion)
	if err != nil {
		return nil, fmt.Errorf("--regions-config, --regions, --in-cluster-region: %w", err)
	}
	keys, err := handover.NewKeys()
	if err != nil {
		return nil, err
	}
	return &regionAccess{config: rc, clusters: &regionlive.Regions{Kubeconfig: cfg.regionsKubeconfig}, keys: keys,
		handed: manifests.NewMemory(handedOverBytes, time.Hour)}, nil
}

// destinations are v's regions with their namespaces; with ?region=, only
// those it names. None answers 404 and nil.
func (s *server) destinations(w http.ResponseWriter, r *http.Request, v *contract.View) []app.Target {
	all := v.Destinations(s.regions.config)
	want := r.URL.Query()["region"]
	if len(want) == 0 {
		return all
	}
	var out []app.Target
	for _, d := range all {
		if slices.Contains(want, d.Region) {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		fail(w, http.StatusNotFound, "application %q does not deploy to region %s", v.Metadata.Name, strings.Join(want, ", "))
	}
	return out
}

// region is the client of one region; an error answers 503.
func (s *server) region(w http.ResponseWriter, v *contract.View, name string) *regionlive.Region {
	rg, err := s.regions.clusters.Region(name)
	if err != nil {
		fail(w, http.StatusServiceUnavailable, "application %q: %v", v.Metadata.Name, err)
		return nil
	}
	return rg
}

// managedIn are v's resources in region: the objects its status lists
// (child apps, which run as apps, left out) and its last operation's hooks.
func managedIn(v *contract.View, region string) []app.ResourceKey {
	var out []app.ResourceKey
	for _, res := range v.Status.Resources {
		if res.Region == region && res.Kind != app.Kind {
			out = append(out, res.ResourceKey)
		}
	}
	// The last operation's hooks, while they live (their delete policy
	// keeps them), as Argo CD's tree shows them.
	if op := v.Status.OperationState; op != nil {
		for _, res := range op.Results {
			if res.Region == region && res.HookType != "" && !slices.Contains(out, res.ResourceKey) {
				out = append(out, res.ResourceKey)
			}
		}
	}
	return out
}

// targetObjects are the manifests of v's target, handed over by the
// control workers (once per set: they are kept by digest).
func (s *server) targetObjects(ctx context.Context, v *contract.View) (contract.Target, []*unstructured.Unstructured, error) {
	name := v.Metadata.Name
	t, err := ferryclient.Target(ctx, s.temporal, name)
	if err != nil {
		return t, nil, fmt.Errorf("the target of application %q: %w", name, err)
	}
	key := "handover/" + t.Digest
	payload, ok := s.regions.handed.Get(ctx, key)
	if !ok {
		got, err, _ := s.regions.flights.Do(key, func() (any, error) {
			in := contract.HandOverInput{Target: t, Region: "ferry-server", Project: v.ProjectOf()}
			return ferryclient.HandOverOpen(ctx, s.temporal, s.regions.keys, in)
		})
		if err != nil {
			return t, nil, err
		}
		payload = got.([]byte)
		s.regions.handed.Put(ctx, key, payload)
	}
	objs, err := manifests.Decode(payload)
	if err != nil {
		return t, nil, fmt.Errorf("application %q: the manifests of %.12s: %w", name, t.SHA, err)
	}
	kept := objs[:0]
	for _, o := range objs {
		if !app.IsApplication(o.GetAPIVersion(), o.GetKind()) { // an app of apps' children run as apps
			kept = append(kept, o)
		}
	}
	return t, kept, nil
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
