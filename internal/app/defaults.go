package app

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash/fnv"
	"strings"
	"time"

	"github.com/ferry-gitops/ferry/internal/regions"
)

// Defaults. Parse keeps the file as written and never fills these in, so
// that "ferry app get" shows what the user wrote and SpecDigest changes only
// when the file does; read the effective values through the methods below.
const (
	// DefaultTargetRevision is what an empty spec.source.targetRevision means.
	DefaultTargetRevision = "HEAD"
	// DefaultPollInterval is how often an app polls Git when
	// spec.pollInterval is empty, as Argo CD's default reconciliation period.
	DefaultPollInterval = 180 * time.Second
	// MinPollInterval is the shortest spec.pollInterval accepted; tests use
	// short ones, production rarely wants less than a minute.
	MinPollInterval = time.Second
	// InClusterServer is Argo CD's address for the cluster it runs in.
	InClusterServer = regions.InClusterServer
	// InClusterName is Argo CD's name for that cluster.
	InClusterName = regions.InClusterName
)

// Revision is the revision to resolve: targetRevision, or HEAD when empty.
func (s *Source) Revision() string {
	if s.TargetRevision == "" {
		return DefaultTargetRevision
	}
	return s.TargetRevision
}

// PollInterval is how long the app waits between two polls of Git:
// spec.pollInterval, DefaultPollInterval when empty or unreadable, never
// less than MinPollInterval. Add Jitter to spread apps over the interval.
func (a *Application) PollInterval() time.Duration {
	if a.Spec.PollInterval == "" {
		return DefaultPollInterval
	}
	d, err := time.ParseDuration(a.Spec.PollInterval)
	if err != nil {
		return DefaultPollInterval
	}
	return max(d, MinPollInterval)
}

// Target is one region an Application deploys to.
type Target struct {
	Region string `json:"region"`
	// Namespace is destination.namespace: the namespace of the app's
	// namespaced resources that name none. Empty leaves that to the manifests.
	Namespace string `json:"namespace,omitempty"`
}

// Destinations resolves spec.destination or spec.destinations to the regions
// to deploy to, in the order written, through rc: a destination.name is a
// region or one of its aliases, a destination.server a region's server (Argo
// CD's in-cluster destination is rc's in-cluster region). Call Validate
// first: for an invalid spec the result may hold empty or duplicate regions.
func (a *Application) Destinations(rc *regions.Config) []Target {
	dests := a.DestinationList()
	targets := make([]Target, 0, len(dests))
	for _, d := range dests {
		targets = append(targets, Target{Region: d.region(rc), Namespace: d.Namespace})
	}
	return targets
}

// DestinationList is spec.destination as a list of one, or else
// spec.destinations, as written.
func (a *Application) DestinationList() []Destination {
	if a.Spec.Destination != nil {
		return []Destination{*a.Spec.Destination}
	}
	return a.Spec.Destinations
}

// Regions is the region of each of Destinations, in the same order.
func (a *Application) Regions(rc *regions.Config) []string {
	targets := a.Destinations(rc)
	regions := make([]string, len(targets))
	for i, t := range targets {
		regions[i] = t.Region
	}
	return regions
}

// region is the name of the region d resolves to through rc: "" for a
// server no region has; an unknown name is itself (Validate refuses it).
func (d Destination) region(rc *regions.Config) string {
	if d.Name != "" {
		if r, ok := rc.ForName(d.Name); ok {
			return r.Name
		}
		return d.Name
	}
	if r, ok := rc.ByServer(d.Server); ok {
		return r.Name
	}
	return ""
}

func isInClusterServer(server string) bool {
	return strings.TrimSuffix(server, "/") == InClusterServer
}

// AutomatedSync reports whether Ferry syncs on its own when the app is out
// of sync (syncPolicy.automated present, and enabled unless set to false).
func (a *Application) AutomatedSync() bool {
	sp := a.Spec.SyncPolicy
	return sp != nil && sp.Automated != nil && (sp.Automated.Enabled == nil || *sp.Automated.Enabled)
}

// AutoPrune reports whether automated syncs delete resources gone from Git.
func (a *Application) AutoPrune() bool {
	return a.AutomatedSync() && a.Spec.SyncPolicy.Automated.Prune
}

// SelfHeal reports whether drift in the cluster alone triggers a sync.
func (a *Application) SelfHeal() bool {
	return a.AutomatedSync() && a.Spec.SyncPolicy.Automated.SelfHeal
}

// AllowEmpty reports whether an automated sync may prune every resource
// when Git renders none.
func (a *Application) AllowEmpty() bool {
	return a.AutomatedSync() && a.Spec.SyncPolicy.Automated.AllowEmpty
}

// Retry is the retry policy of failed syncs; nil means no retry, and the
// RetryPolicy methods accept a nil receiver.
func (a *Application) Retry() *RetryPolicy {
	if a.Spec.SyncPolicy == nil {
		return nil
	}
	return a.Spec.SyncPolicy.Retry
}

// SyncOptions are spec.syncPolicy.syncOptions parsed; options that do not
// parse are skipped (Validate reports them).
func (a *Application) SyncOptions() SyncOptions {
	var o SyncOptions
	if a.Spec.SyncPolicy != nil {
		for _, item := range a.Spec.SyncPolicy.SyncOptions {
			_ = o.apply(item)
		}
	}
	return o
}

// SpecDigest identifies the spec as written: the first 16 hex digits of the
// SHA-256 of its JSON (struct fields in declaration order, map keys sorted,
// so equal specs give equal digests). Defaults are not applied: writing
// targetRevision: HEAD changes the digest though not the meaning.
func (a *Application) SpecDigest() string {
	b, err := json.Marshal(a.Spec)
	if err != nil {
		// Only helm.valuesObject holds free-form values; NaN or Inf there is
		// the one way to get here, and a fixed digest is the safe answer.
		b = []byte(err.Error())
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// Jitter is a delay in [0, interval/10] derived from the app's name (FNV-1a),
// so that apps started together do not poll Git together, and one app keeps
// the same offset across restarts and replays.
func Jitter(name string, interval time.Duration) time.Duration {
	if interval <= 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	return time.Duration(h.Sum64() % uint64(interval/10+1))
}
