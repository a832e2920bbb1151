package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/customize"
	"github.com/ferry-gitops/ferry/internal/diff"
	"github.com/ferry-gitops/ferry/internal/kube"
	"github.com/ferry-gitops/ferry/internal/regionlive"
)

// resourceTree is GET /api/v1/applications/{name}/resource-tree: Argo
// CD's ApplicationTree, the app's objects and what they own (ReplicaSets,
// Pods…), each node with the region it runs in. A region that cannot be
// read shows the app's objects as its status knows them, without what they
// own.
func (s *server) resourceTree(w http.ResponseWriter, r *http.Request) {
	_, v := s.readApp(w, r)
	if v == nil {
		return
	}
	dests := s.destinations(w, r, v)
	if dests == nil {
		return
	}
	perRegion := make([][]regionlive.Node, len(dests)) // the regions are read at once
	var wg sync.WaitGroup
	for i, d := range dests {
		wg.Go(func() {
			rg, err := s.regions.clusters.Region(d.Region)
			var got []regionlive.Node
			if err == nil {
				got, err = rg.Tree(r.Context(), managedIn(v, d.Region))
			}
			if err != nil {
				s.log.Warn("a region's resource tree is its status", "app", v.Metadata.Name, "region", d.Region, "error", err)
				got = statusNodes(v, d.Region)
			}
			perRegion[i] = got
		})
	}
	wg.Wait()
	nodes := []regionlive.Node{}
	for _, got := range perRegion {
		nodes = append(nodes, got...)
	}
	writeJSON(w, http.StatusOK, map[string]any{"nodes": nodes, "orphanedNodes": []any{}, "hosts": []any{}})
}

// statusNodes are the nodes of v's objects in region as its status lists
// them.
func statusNodes(v *contract.View, region string) []regionlive.Node {
	var out []regionlive.Node
	for _, res := range v.Status.Resources {
		if res.Region != region || res.Kind == app.Kind {
			continue
		}
		n := regionlive.Node{Group: res.Group, Version: res.Version, Kind: res.Kind, Namespace: res.Namespace, Name: res.Name, Region: region}
		if res.Health != "" {
			n.Health = &regionlive.Health{Status: res.Health, Message: res.HealthMessage}
		}
		out = append(out, n)
	}
	return out
}

// resourceDiff is Argo CD's ResourceDiff: states as JSON texts ("null"
// for none), with Ferry's region and the comparison's message.
type resourceDiff struct {
	Group               string `json:"group"`
	Kind                string `json:"kind"`
	Namespace           string `json:"namespace"`
	Name                string `json:"name"`
	TargetState         string `json:"targetState"`
	LiveState           string `json:"liveState"`
	NormalizedLiveState string `json:"normalizedLiveState"`
	PredictedLiveState  string `json:"predictedLiveState"`
	ResourceVersion     string `json:"resourceVersion,omitempty"`
	Modified            bool   `json:"modified"`
	Hook                bool   `json:"hook"`
	Region              string `json:"region"`
	Message             string `json:"message,omitempty"`
	// UnifiedDiff is Ferry's: live against what a sync would make of it,
	// as ferry app diff prints it, for a modified object.
	UnifiedDiff string `json:"unifiedDiff,omitempty"`
}

// unifiedLimit bounds the unified diff of one object.
const unifiedLimit = 256 << 10

// managedResources is GET /api/v1/applications/{name}/managed-resources:
// every object of the app in each region as Git wants it, as it runs, and
// the comparison's sides (live normalised, and what a sync would make of
// it), Secret values masked; ?group=, ?kind=, ?namespace=, ?name= narrow
// it.
func (s *server) managedResources(w http.ResponseWriter, r *http.Request) {
	_, v := s.readApp(w, r)
	if v == nil {
		return
	}
	dests := s.destinations(w, r, v)
	if dests == nil {
		return
	}
	name := v.Metadata.Name
	_, objs, err := s.targetObjects(r.Context(), v)
	if err != nil {
		fail(w, http.StatusServiceUnavailable, "%v", err)
		return
	}
	req, set, err := s.compareRequest(v)
	if err != nil {
		fail(w, http.StatusServiceUnavailable, "application %q: %v", name, err)
		return
	}
	q := r.URL.Query()
	items := []resourceDiff{}
	for _, d := range dests {
		rg := s.region(w, v, d.Region)
		if rg == nil {
			return
		}
		excluded := func(group, kind string) bool { return set.Excluded(group, kind, d.Region) }
		rreq := req
		rreq.Namespace = d.Namespace
		for _, o := range objs {
			if gvk := o.GroupVersionKind(); !excluded(gvk.Group, gvk.Kind) {
				rreq.Objects = append(rreq.Objects, o)
			}
		}
		for _, k := range managedIn(v, d.Region) {
			if !excluded(k.Group, k.Kind) {
				rreq.Inventory = append(rreq.Inventory, k)
			}
		}
		states, err := rg.Cluster.States(r.Context(), rreq)
		var objErrs *kube.ObjectErrors
		if err != nil && !errors.As(err, &objErrs) {
			fail(w, http.StatusServiceUnavailable, "application %q: region %s: %v", name, d.Region, err)
			return
		}
		for _, st := range states {
			k := st.Key
			if narrowed(q.Get("group"), k.Group) || narrowed(q.Get("kind"), k.Kind) || narrowed(q.Get("namespace"), k.Namespace) || narrowed(q.Get("name"), k.Name) {
				continue
			}
			items = append(items, resourceDiffOf(d.Region, st))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items})
}

// compareRequest is what every region's comparison of v shares: its sync
// options, and its ignoreDifferences with argocd-cm's; and argocd-cm's
// resource filter.
func (s *server) compareRequest(v *contract.View) (kube.CompareRequest, *customize.Set, error) {
	set, err := customize.FromData(s.live.configMap("argocd-cm"))
	if err != nil {
		return kube.CompareRequest{}, nil, fmt.Errorf("argocd-cm: %w", err)
	}
	var opts []string
	if sp := v.Spec.SyncPolicy; sp != nil {
		opts = sp.SyncOptions
	}
	syncOpts, err := app.ParseSyncOptions(opts)
	if err != nil {
		return kube.CompareRequest{}, nil, err
	}
	rules, err := diff.Compile(append(slices.Clip(v.Spec.IgnoreDifferences), set.IgnoreAll()...))
	if err != nil {
		return kube.CompareRequest{}, nil, err
	}
	return kube.CompareRequest{App: v.Metadata.Name, Options: syncOpts, Ignore: rules}, set, nil
}

// narrowed: a filter is given and value is not it.
func narrowed(filter, value string) bool { return filter != "" && filter != value }

func resourceDiffOf(region string, st kube.ObjectStates) resourceDiff {
	k := st.Key
	out := resourceDiff{Group: k.Group, Kind: k.Kind, Namespace: k.Namespace, Name: k.Name, Region: region, Modified: st.Modified, Message: st.Message,
		TargetState: jsonText(st.Target), LiveState: jsonText(st.Live), NormalizedLiveState: jsonText(st.NormalizedLive), PredictedLiveState: jsonText(st.Predicted)}
	if st.Live != nil {
		out.ResourceVersion = (&unstructured.Unstructured{Object: st.Live}).GetResourceVersion()
	}
	if st.Modified {
		name := kindOf(k.Group, k.Kind) + "/" + k.Namespace + "/" + k.Name
		if k.Namespace == "" {
			name = kindOf(k.Group, k.Kind) + "/" + k.Name
		}
		out.UnifiedDiff, _ = diff.Result{Live: st.NormalizedLive, Desired: st.Predicted}.Unified(name, unifiedLimit)
	}
	return out
}

// jsonText is obj as JSON text, "null" for none.
func jsonText(obj map[string]any) string {
	if obj == nil {
		return "null"
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return "null"
	}
	return string(b)
}
