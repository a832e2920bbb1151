package app

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// destinations checks where an Application deploys to: one region or
// several, each by name, alias or server URL (Argo CD's in-cluster address
// among them).
func (v *validator) destinations(spec *Spec) {
	switch {
	case spec.Destination == nil && len(spec.Destinations) == 0:
		v.add("spec.destination", "required: set spec.destination.name to the region to deploy to%s, or list several regions in spec.destinations",
			v.knownRegionsHint())
		return
	case spec.Destination != nil && len(spec.Destinations) > 0:
		v.add("spec.destinations", "set either spec.destination (one region) or spec.destinations (several), not both")
		return
	}
	if spec.Destination != nil {
		v.destination("spec.destination", *spec.Destination)
		return
	}
	seen := map[string]string{}
	for i, d := range spec.Destinations {
		p := fmt.Sprintf("spec.destinations[%d]", i)
		region, ok := v.destination(p, d)
		if !ok {
			continue
		}
		if prev, dup := seen[region]; dup {
			field := p + ".name"
			if d.Name == "" {
				field = p + ".server"
			}
			v.add(field, "region %q is listed twice (also at %s): list each region once", region, prev)
			continue
		}
		seen[region] = p
	}
}

// destination checks one destination and returns the region it resolves to.
func (v *validator) destination(p string, d Destination) (string, bool) {
	if d.Namespace != "" {
		if errs := validation.IsDNS1123Label(d.Namespace); len(errs) > 0 {
			v.add(p+".namespace", "%q is not a valid namespace: %s", d.Namespace, strings.Join(errs, "; "))
		}
	}
	switch {
	case d.Name != "" && d.Server != "":
		v.add(p, "set either name (a region) or server, not both; Ferry addresses clusters by region: keep name")
		return "", false
	case d.Name == "" && d.Server == "":
		v.add(p+".name", "required: the region to deploy to%s", v.knownRegionsHint())
		return "", false
	}
	rc := v.opts.Regions
	if d.Server != "" {
		r, ok := rc.ByServer(d.Server)
		switch {
		case ok:
			return r.Name, true
		case isInClusterServer(d.Server):
			v.inClusterUnmapped(p + ".server")
		default:
			v.add(p+".server", "%q is the server of no region%s: write name: <region> instead, or have the operator give that region this server in the workers' regions configuration (--regions-config)",
				d.Server, v.knownServersHint())
		}
		return "", false
	}
	r, ok := rc.ForName(d.Name)
	switch {
	case ok:
		return r.Name, true
	case d.Name == InClusterName:
		v.inClusterUnmapped(p + ".name")
	case rc.Open():
		v.add(p+".name", "%q is not a valid region name: %s", d.Name, strings.Join(validation.IsDNS1123Label(d.Name), "; "))
	default:
		v.add(p+".name", "unknown region %q: known regions are %s", d.Name, strings.Join(rc.Names(), ", "))
	}
	return "", false
}

func (v *validator) inClusterUnmapped(field string) {
	v.add(field, "this Ferry installation maps no region to Argo CD's in-cluster destination: write name: <region>%s instead, or have the operator name an in-cluster region",
		v.knownRegionsHint())
}

func (v *validator) knownRegionsHint() string {
	if v.opts.Regions.Open() {
		return ""
	}
	return " (one of " + strings.Join(v.opts.Regions.Names(), ", ") + ")"
}

func (v *validator) knownServersHint() string {
	var servers []string
	for _, r := range v.opts.Regions.Regions() {
		if r.Server != "" {
			servers = append(servers, r.Name+": "+r.Server)
		}
	}
	if len(servers) == 0 {
		return " (no region has a server URL)"
	}
	return " (" + strings.Join(servers, ", ") + ")"
}
