// Package regions is the workers' knowledge of the regions Ferry deploys to:
// each region's name, the API server URL Argo CD files address it by
// (spec.destination.server), the other names it answers to
// (spec.destination.name, as Argo CD's cluster names), its labels and
// annotations (what ApplicationSet's clusters generator selects on), the
// AppProject it is scoped to (an Argo CD cluster Secret's project), and
// which one is Argo CD's in-cluster destination.
//
// A Config comes from a YAML file (the workers' --regions-config):
//
//	regions:
//	  - name: us-east-1
//	    server: https://10.0.0.1:6443
//	    aliases: [prod-east]
//	    labels: {env: prod}
//	    inCluster: true
//	  - name: eu-west-1
//	    server: https://10.0.1.1:6443
//	    project: team-a
//
// or from the older shorthand flags (FromFlags: --regions a,b and
// --in-cluster-region a). A nil *Config is no configuration at all: any
// well-formed region name is accepted, and the in-cluster destination is the
// region named in-cluster.
//
// When no region is marked inCluster, Argo CD's in-cluster destination
// (server https://kubernetes.default.svc, or name in-cluster) maps to the
// only region, or else to the one named in-cluster; with neither it is
// refused.
package regions
