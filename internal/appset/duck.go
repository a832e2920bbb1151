package appset

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ferry-gitops/ferry/internal/app"
)

// DuckTypeGenerator is Argo CD's clusterDecisionResource generator: the
// clusters named in the status of duck-typed resources of the control
// namespace (such as Open Cluster Management's PlacementDecisions).
type DuckTypeGenerator struct {
	// ConfigMapRef names the ConfigMap of the control namespace that says
	// which resources to read: apiVersion (group/version), kind (the
	// resource's plural name), statusListKey (default clusters) and
	// matchKey (the field of a decision naming the cluster).
	ConfigMapRef string `json:"configMapRef"`
	// Name picks one resource; else LabelSelector picks them.
	Name          string         `json:"name,omitempty"`
	LabelSelector *LabelSelector `json:"labelSelector,omitempty"`
	// RequeueAfterSeconds is how often the resource is read; default 3 minutes, as in Argo CD.
	RequeueAfterSeconds *int64            `json:"requeueAfterSeconds,omitempty"`
	Values              map[string]string `json:"values,omitempty"`
	Template            *Template         `json:"template,omitempty"`
}

// duckDefaultStatusListKey is Argo CD's default statusListKey.
const duckDefaultStatusListKey = "clusters"

// duckType yields one parameter set per decision of the selected resources
// whose matchKey names a cluster (a region): the cluster's name and server,
// then the decision's fields as strings, then values as written, as Argo
// CD's DuckTypeGenerator does. A decision naming no known cluster is
// skipped; a resource without a status too.
func (g *generation) duckType(ctx context.Context, d *DuckTypeGenerator, p string) ([]Params, error) {
	p += ".clusterDecisionResource"
	ctl, err := g.control("clusterDecisionResource", "ConfigMap "+d.ConfigMapRef)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	cm, err := ctl.ConfigMap(ctx, d.ConfigMapRef)
	if err != nil {
		return nil, fmt.Errorf("%s.configMapRef: %w", p, err)
	}
	gvr, statusKey, matchKey, err := duckConfig(d.ConfigMapRef, cm)
	if err != nil {
		return nil, fmt.Errorf("%s.configMapRef: %w", p, err)
	}
	selector := ""
	if d.Name == "" {
		sel, err := metav1.LabelSelectorAsSelector(d.LabelSelector.metav1())
		if err != nil {
			return nil, fmt.Errorf("%s.labelSelector: %w", p, err)
		}
		selector = sel.String()
	}
	resources, err := ctl.List(ctx, gvr, d.Name, selector)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if len(resources) == 0 {
		what := "resource " + d.Name
		if d.Name == "" {
			what = "resource with labels " + selector
		}
		return nil, fmt.Errorf("%s: no %s of %s in the control namespace: no clusterDecisionResources found", p, what, gvr.Resource)
	}
	clusters := map[string]Cluster{}
	for _, c := range g.opts.Clusters {
		clusters[c.Name] = c
	}
	var out []Params
	for _, r := range resources {
		decisions, err := statusList(r, statusKey)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		for _, dec := range decisions {
			c, ok := clusters[matchValue(dec[matchKey])]
			if !ok {
				continue
			}
			ps := Params{"name": c.Name, "server": c.Server}
			for k, v := range dec {
				ps[k] = fmt.Sprint(v)
			}
			out = append(out, g.r.rawValues(ps, d.Values))
		}
	}
	return out, nil
}

// duckConfig reads the ConfigMap of a clusterDecisionResource generator.
// Unlike Argo CD, a ConfigMap without matchKey is an error, not an empty
// generation that would delete every app of the set.
func duckConfig(name string, cm map[string]string) (gvr schema.GroupVersionResource, statusKey, matchKey string, err error) {
	var problems []string
	group, version, ok := strings.Cut(cm["apiVersion"], "/")
	if !ok || group == "" || version == "" {
		problems = append(problems, fmt.Sprintf("apiVersion %q is not group/version: write the duck-typed resource's, such as cluster.open-cluster-management.io/v1beta1", cm["apiVersion"]))
	}
	if cm["kind"] == "" {
		problems = append(problems, "kind is missing: write the resource's plural name, such as placementdecisions")
	}
	if cm["matchKey"] == "" {
		problems = append(problems, "matchKey is missing: write the field of each decision that names the cluster, such as clusterName")
	}
	if len(problems) > 0 {
		return gvr, "", "", fmt.Errorf("ConfigMap %s: %s", name, strings.Join(problems, "; "))
	}
	statusKey = cm["statusListKey"]
	if statusKey == "" {
		statusKey = duckDefaultStatusListKey
	}
	return schema.GroupVersionResource{Group: group, Version: version, Resource: cm["kind"]}, statusKey, cm["matchKey"], nil
}

// statusList is status.<key> of a resource: its decisions.
func statusList(r map[string]any, key string) ([]map[string]any, error) {
	status, _ := r["status"].(map[string]any)
	if len(status) == 0 {
		return nil, nil
	}
	raw, ok := status[key]
	if !ok || raw == nil {
		return nil, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: status.%s is not a list", resourceID(r), key)
	}
	out := make([]map[string]any, 0, len(list))
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: status.%s[%d] is not an object", resourceID(r), key, i)
		}
		out = append(out, m)
	}
	return out, nil
}

func matchValue(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

func resourceID(r map[string]any) string {
	md, _ := r["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	kind, _ := r["kind"].(string)
	return kind + " " + name
}

// rawValues adds a generator's values as written, as Argo CD's
// clusterDecisionResource generator adds them (unrendered).
func (r renderer) rawValues(p Params, values map[string]string) Params {
	if len(values) == 0 {
		return p
	}
	if r.goTemplate {
		v := map[string]any{}
		for k, s := range values {
			v[k] = s
		}
		p["values"] = v
		return p
	}
	for k, s := range values {
		p["values."+k] = s
	}
	return p
}

// metav1 is the selector as Kubernetes' type; nil selects everything.
func (sel *LabelSelector) metav1() *metav1.LabelSelector {
	if sel == nil {
		return &metav1.LabelSelector{}
	}
	out := &metav1.LabelSelector{MatchLabels: sel.MatchLabels}
	for _, r := range sel.MatchExpressions {
		out.MatchExpressions = append(out.MatchExpressions, metav1.LabelSelectorRequirement{
			Key: r.Key, Operator: metav1.LabelSelectorOperator(r.Operator), Values: r.Values})
	}
	return out
}

// validateDuckType checks a clusterDecisionResource generator.
func validateDuckType(d *DuckTypeGenerator, path string) []app.FieldError {
	var errs []app.FieldError
	p := path + ".clusterDecisionResource"
	if d.ConfigMapRef == "" {
		errs = append(errs, app.FieldError{Field: p + ".configMapRef", Message: "required: the ConfigMap of the control namespace giving apiVersion, kind, statusListKey and matchKey"})
	}
	hasSelector := d.LabelSelector != nil && (len(d.LabelSelector.MatchLabels) > 0 || len(d.LabelSelector.MatchExpressions) > 0)
	switch {
	case d.Name == "" && !hasSelector:
		errs = append(errs, app.FieldError{Field: p, Message: "give name (one resource) or labelSelector (matchLabels or matchExpressions) to pick the resources whose decisions count"})
	case d.Name != "" && hasSelector:
		errs = append(errs, app.FieldError{Field: p, Message: "give name or labelSelector, not both"})
	}
	selErrs := validateSelector(d.LabelSelector, p+".labelSelector")
	errs = append(errs, selErrs...)
	if hasSelector && len(selErrs) == 0 {
		if _, err := metav1.LabelSelectorAsSelector(d.LabelSelector.metav1()); err != nil {
			errs = append(errs, app.FieldError{Field: p + ".labelSelector", Message: err.Error()})
		}
	}
	errs = append(errs, validateRequeue(d.RequeueAfterSeconds, p)...)
	return errs
}

func validateRequeue(r *int64, p string) []app.FieldError {
	if r != nil && *r < 0 {
		return []app.FieldError{{Field: p + ".requeueAfterSeconds", Message: "must not be negative"}}
	}
	return nil
}
