package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/diff"
	"github.com/ferry-gitops/ferry/internal/kube"
)

// ferry app manifests, diff and resources through ferry-server: the server
// reads the regions and hands over the workers' manifests (Secret values
// masked); the CLI prints them as its direct paths do.

// managedResource is one item of the server's managed-resources: the
// states are JSON texts, "null" for none.
type managedResource struct {
	Group, Kind, Namespace, Name, Region                            string
	TargetState, LiveState, NormalizedLiveState, PredictedLiveState string
	Modified                                                        bool
	Message                                                         string
}

func (m managedResource) key() app.ResourceKey {
	return app.ResourceKey{Group: m.Group, Kind: m.Kind, Namespace: m.Namespace, Name: m.Name}
}

// managedResources are the app's objects in every region (or regions),
// live against Git, as the server compares them.
func managedResources(ctx context.Context, a *api, name string, regions []string) ([]managedResource, error) {
	path, q := appPath(name, "/managed-resources")
	var out struct{ Items []managedResource }
	if err := a.do(ctx, "GET", path, regionQuery(q, regions), nil, &out); err != nil {
		return nil, fmt.Errorf("app %q: %w", name, err)
	}
	return out.Items, nil
}

// jsonObject is a state's JSON text as an object; nil for "null".
func jsonObject(text string) (map[string]any, error) {
	var obj map[string]any
	if err := json.Unmarshal([]byte(text), &obj); err != nil {
		return nil, fmt.Errorf("ferry-server's answer: %w", err)
	}
	return obj, nil
}

func doorManifests(cmd *cobra.Command, a *api, f *manifestsFlags, name string) error {
	if f.source != "git" && f.source != "live" {
		return fmt.Errorf("--source %q: want git or live", f.source)
	}
	if err := refuseFlags(cmd, map[string]string{"kubeconfig": serverReadsRegions, "cache-dir": serverHasManifests}); err != nil {
		return err
	}
	ctx, out := cmd.Context(), cmd.OutOrStdout()
	if f.source == "git" {
		path, q := appPath(name, "/manifests")
		if f.revision != "" {
			q.Set("revision", f.revision)
		}
		var m struct{ Manifests []string }
		if err := a.do(ctx, "GET", path, q, nil, &m); err != nil {
			if se := (*serverError)(nil); errors.As(err, &se) && se.Status == http.StatusBadRequest && f.revision != "" {
				return fmt.Errorf("app %q: %w (you are logged in, so ferry app manifests asks ferry-server: run ferry logout to render another revision here, operators only)", name, err)
			}
			return fmt.Errorf("app %q: %w", name, err)
		}
		objs := make([]*unstructured.Unstructured, 0, len(m.Manifests))
		for _, text := range m.Manifests {
			obj, err := jsonObject(text)
			if err != nil {
				return err
			}
			objs = append(objs, &unstructured.Unstructured{Object: obj})
		}
		return printManifests(out, "", objs)
	}
	items, err := managedResources(ctx, a, name, f.regions)
	if err != nil {
		return err
	}
	for _, it := range items {
		obj, err := jsonObject(it.LiveState)
		if err != nil {
			return err
		}
		if obj == nil {
			continue
		}
		if err := printManifests(out, it.Region, []*unstructured.Unstructured{{Object: obj}}); err != nil {
			return err
		}
	}
	return nil
}

// doorDiff prints the diff of every region as the server compares it, and
// returns how many resources differ.
func doorDiff(cmd *cobra.Command, a *api, f *diffFlags, name string) (int, error) {
	err := refuseFlags(cmd, map[string]string{"kubeconfig": serverReadsRegions, "redis-addr": serverHasManifests, "cache-dir": serverHasManifests,
		"resource-customizations": serverReadsConfig,
		"revision":                "is not sent when you are logged in: ferry-server compares with the app's target revision only; drop it (or ferry logout to render another revision here, operators only)"})
	if err != nil {
		return 0, err
	}
	ctx, out := cmd.Context(), cmd.OutOrStdout()
	v, err := doorView(ctx, a, name, nil)
	if err != nil {
		return 0, err
	}
	items, err := managedResources(ctx, a, name, f.regions)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(out, "app %s at %s (%s)\n", name, short(v.Status.Sync.Revision), v.PrimaryRepoURL())
	differs := 0
	for _, it := range items {
		if !it.Modified {
			continue
		}
		differs++
		var res diff.Result
		if res.Live, err = jsonObject(it.NormalizedLiveState); err != nil {
			return differs, err
		}
		if res.Desired, err = jsonObject(it.PredictedLiveState); err != nil {
			return differs, err
		}
		k, msg := it.key(), it.Message
		if msg == "" {
			msg = "differs at " + diff.Summarize(res.Paths(3))
		}
		text, err := res.Unified(kube.KeyString(k), diffLimit)
		if err != nil {
			msg = err.Error()
		}
		fmt.Fprintf(out, "===== %s: %s %s: %s\n", it.Region, kindOf(k), objectName(k), msg)
		fmt.Fprint(out, text)
	}
	if differs == 0 {
		fmt.Fprintf(out, "no differences: app %q is in sync with %s in every region\n", name, short(v.Status.Sync.Revision))
	}
	return differs, nil
}

// doorResources lists the app's resources from its view; orphaned
// resources are not offered through the server.
func doorResources(cmd *cobra.Command, a *api, f *resourcesFlags, name string, mode resourcesMode) error {
	if mode == listOrphaned {
		return errors.New("--orphaned: orphaned resources are not offered through ferry-server yet: run ferry logout to list them through your kubeconfig (operators only)")
	}
	if err := refuseFlags(cmd, map[string]string{"kubeconfig": serverReadsRegions, "resource-customizations": serverReadsConfig}); err != nil {
		return err
	}
	v, err := doorView(cmd.Context(), a, name, nil)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	tw := resourcesTable(out)
	if invalid := invalidSpec(v.Status.Conditions); len(invalid) > 0 {
		printInvalid(cmd.ErrOrStderr(), invalid)
		return tw.Flush()
	}
	for _, d := range v.Destinations(knownRegions()) {
		if len(f.regions) == 0 || contains(f.regions, d.Region) {
			printManaged(tw, v.Status.Resources, d.Region)
		}
	}
	return tw.Flush()
}

func resourcesTable(out io.Writer) *tabwriter.Writer {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REGION\tGROUP\tKIND\tNAMESPACE\tNAME\tORPHANED")
	return tw
}
