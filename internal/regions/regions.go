package regions

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
)

const (
	// InClusterServer is Argo CD's address for the cluster it runs in.
	InClusterServer = "https://kubernetes.default.svc"
	// InClusterName is Argo CD's name for that cluster.
	InClusterName = "in-cluster"
)

// Region is one region: a cluster that Ferry deploys to, served by the
// workers of task queue ferry-region-<Name>.
type Region struct {
	// Name is the region's name: a DNS label, the name of its task queue
	// and of its kubeconfig context.
	Name string `json:"name"`
	// Server is the API server URL that Argo CD files name this region by
	// (spec.destination.server); empty: none, only its names address it.
	Server string `json:"server,omitempty"`
	// Aliases are further destination.name values that mean this region,
	// as Argo CD's cluster names do.
	Aliases []string `json:"aliases,omitempty"`
	// Labels and Annotations describe the region as an Argo CD cluster
	// Secret's do; ApplicationSet's clusters generator selects on them.
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	// InCluster makes this region Argo CD's in-cluster destination (server
	// https://kubernetes.default.svc, or name in-cluster).
	InCluster bool `json:"inCluster,omitempty"`
	// Project scopes the region to the AppProject of that name, as an Argo
	// CD cluster Secret's project field does: the apps of that project may
	// deploy to any namespace of it (an implicit destination), and a
	// project with permitOnlyProjectScopedClusters deploys only to regions
	// scoped to it. Empty: the region belongs to no project.
	Project string `json:"project,omitempty"`
}

// Config is the set of regions and the lookups from an Application's
// destination to one of them. A nil *Config is no configuration (see the
// package doc); its methods accept a nil receiver.
type Config struct {
	list     []Region
	byName   map[string]int
	byServer map[string]int
	byAlias  map[string]int
	// open accepts any well-formed region name (no list was given);
	// openInCluster is then the in-cluster region's name. list then holds
	// the regions of cluster Secrets alone (clusters.go).
	open          bool
	openInCluster string
	// live, when set, makes this Config a view of the one it holds, which
	// SetClusters replaces (clusters.go); every method reads that one.
	live *liveRegions
}

// New checks regions and builds their Config; the error names every
// problem. When none is marked InCluster, the only region, or else the one
// named in-cluster, becomes the in-cluster one.
func New(list []Region) (*Config, error) {
	c := &Config{byName: map[string]int{}, byServer: map[string]int{}, byAlias: map[string]int{}}
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	inCluster := -1
	for i, r := range list {
		p := fmt.Sprintf("regions[%d]", i)
		if r.Name != "" {
			p = fmt.Sprintf("region %q", r.Name)
		}
		if msg := checkName(r.Name); msg != "" {
			bad("regions[%d].name: %s", i, msg)
		} else if prev, dup := c.byName[r.Name]; dup {
			bad("regions[%d].name: %q is also regions[%d]: name each region once", i, r.Name, prev)
		} else {
			c.byName[r.Name] = i
		}
		if r.Server != "" {
			server := normalServer(r.Server)
			switch {
			case server == InClusterServer:
				bad("%s: server %s is Argo CD's in-cluster address: write inCluster: true instead", p, r.Server)
			case checkServer(r.Server) != "":
				bad("%s: server %q %s", p, r.Server, checkServer(r.Server))
			default:
				if prev, dup := c.byServer[server]; dup {
					bad("%s: server %s is also region %q's: a server URL names one region", p, r.Server, list[prev].Name)
				} else {
					c.byServer[server] = i
				}
			}
		}
		for _, a := range r.Aliases {
			switch {
			case a == InClusterName:
				bad("%s: alias %q is Argo CD's in-cluster name: write inCluster: true instead", p, a)
			case strings.TrimSpace(a) == "":
				bad("%s: an alias is empty", p)
			default:
				if prev, dup := c.byAlias[a]; dup {
					bad("%s: alias %q is also region %q's: an alias names one region", p, a, list[prev].Name)
				} else {
					c.byAlias[a] = i
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(r.Labels)) {
			if msg := checkLabel(k, r.Labels[k]); msg != "" {
				bad("%s: label %s", p, msg)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(r.Annotations)) {
			if msg := checkKey(k); msg != "" {
				bad("%s: annotation %q: %s", p, k, msg)
			}
		}
		if r.Project != "" {
			if msg := checkProject(r.Project); msg != "" {
				bad("%s: project %s", p, msg)
			}
		}
		if r.InCluster {
			if inCluster >= 0 {
				bad("%s: inCluster is also set on region %q: one region is the in-cluster destination", p, list[inCluster].Name)
			}
			inCluster = i
		}
		r.Aliases = slices.Clone(r.Aliases)
		c.list = append(c.list, r)
	}
	for i, r := range list {
		for _, a := range r.Aliases {
			if j, clash := c.byName[a]; clash && j != i {
				bad("region %q: alias %q is the name of region %q: an alias names no other region", r.Name, a, list[j].Name)
			}
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("regions configuration: %s", strings.Join(problems, "; "))
	}
	if inCluster < 0 {
		if len(c.list) == 1 {
			inCluster = 0
		} else if i, ok := c.byName[InClusterName]; ok {
			inCluster = i
		}
	}
	if inCluster >= 0 {
		c.list[inCluster].InCluster = true
	}
	return c, nil
}

// FromFlags is the Config of the shorthand flags: known regions (empty
// accepts any well-formed name) and the in-cluster region (empty: the
// default of New, or in-cluster itself when any name is accepted).
func FromFlags(known []string, inCluster string) (*Config, error) {
	if len(known) == 0 {
		if inCluster == "" {
			inCluster = InClusterName
		}
		if msg := checkName(inCluster); msg != "" {
			return nil, fmt.Errorf("in-cluster region: %s", msg)
		}
		return &Config{open: true, openInCluster: inCluster}, nil
	}
	list := make([]Region, 0, len(known))
	for _, n := range slices.Compact(slices.Clone(known)) {
		list = append(list, Region{Name: n, InCluster: n == inCluster})
	}
	if inCluster != "" && !slices.Contains(known, inCluster) {
		return nil, fmt.Errorf("in-cluster region %q is not one of the regions %s: add it to them, or name one of them", inCluster, strings.Join(known, ", "))
	}
	return New(list)
}

// Of is the Config of the regions named, with New's in-cluster default; it
// panics on a name that is not a DNS label (for literals and tests).
func Of(names ...string) *Config {
	c, err := FromFlags(names, "")
	if err != nil {
		panic(err)
	}
	return c
}

// Open reports whether any well-formed region name is accepted: no list of
// regions was given.
func (c *Config) Open() bool {
	c = c.now()
	return c == nil || c.open
}

// Names are the regions' names in the order configured; empty when Open.
func (c *Config) Names() []string {
	if c = c.now(); c == nil || c.open {
		return nil
	}
	names := make([]string, len(c.list))
	for i, r := range c.list {
		names[i] = r.Name
	}
	return names
}

// Regions are the regions in the order configured (copies).
func (c *Config) Regions() []Region {
	if c = c.now(); c == nil || len(c.list) == 0 {
		return nil
	}
	out := make([]Region, len(c.list))
	for i, r := range c.list {
		out[i] = r.clone()
	}
	return out
}

// ByName is the region of that name. When Open, every well-formed name is
// a region (with no server).
func (c *Config) ByName(name string) (Region, bool) {
	c = c.now()
	if c != nil {
		if i, ok := c.byName[name]; ok {
			return c.list[i].clone(), true
		}
	}
	if c.Open() {
		if checkName(name) != "" {
			return Region{}, false
		}
		return Region{Name: name, InCluster: name == c.inClusterName()}, true
	}
	return Region{}, false
}

// ByServer is the region that server (a destination.server URL; a trailing
// slash does not matter) names: the one configured with it, or the
// in-cluster region for Argo CD's in-cluster address.
func (c *Config) ByServer(server string) (Region, bool) {
	c = c.now()
	server = normalServer(server)
	if server == InClusterServer {
		return c.InClusterRegion()
	}
	if c == nil {
		return Region{}, false
	}
	if i, ok := c.byServer[server]; ok {
		return c.list[i].clone(), true
	}
	return Region{}, false
}

// ByAlias is the region that alias (a destination.name other than a
// region's own name) means; in-cluster is the in-cluster region's alias.
func (c *Config) ByAlias(alias string) (Region, bool) {
	c = c.now()
	if alias == InClusterName {
		return c.InClusterRegion()
	}
	if c == nil {
		return Region{}, false
	}
	if i, ok := c.byAlias[alias]; ok {
		return c.list[i].clone(), true
	}
	return Region{}, false
}

// ForName is the region a destination.name means: a region's own name
// first, then an alias (in-cluster included), then, when Open, any
// well-formed name.
func (c *Config) ForName(name string) (Region, bool) {
	c = c.now()
	if !c.Open() {
		if r, ok := c.ByName(name); ok {
			return r, true
		}
		return c.ByAlias(name)
	}
	if r, ok := c.ByAlias(name); ok {
		return r, true
	}
	return c.ByName(name)
}

// InClusterRegion is the region Argo CD's in-cluster destination maps to.
func (c *Config) InClusterRegion() (Region, bool) {
	c = c.now()
	if c.Open() {
		return Region{Name: c.inClusterName(), InCluster: true}, true
	}
	for _, r := range c.list {
		if r.InCluster {
			return r.clone(), true
		}
	}
	return Region{}, false
}

func (c *Config) inClusterName() string {
	if c = c.now(); c == nil {
		return InClusterName
	}
	return c.openInCluster
}

func (r Region) clone() Region {
	r.Aliases = slices.Clone(r.Aliases)
	r.Labels = cloneMap(r.Labels)
	r.Annotations = cloneMap(r.Annotations)
	return r
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func normalServer(server string) string { return strings.TrimSuffix(server, "/") }

func checkServer(server string) string {
	u, err := url.Parse(server)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "is not an http(s) URL of an API server, e.g. https://10.0.0.1:6443"
	}
	return ""
}
