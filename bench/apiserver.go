package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"k8s.io/client-go/rest"
)

// apiKey is one series of apiserver_request_total, less the labels the
// benchmarks do not split by.
type apiKey struct {
	Verb, Resource, Subresource string
	DryRun                      bool
}

// apiCounts are a region's API server request counters at one moment.
type apiCounts map[apiKey]float64

// appKinds are the resources of the benchmark apps (and their namespaces):
// the requests a reconcile of them makes land there.
var appKinds = []string{"configmaps", "services", "deployments", "namespaces"}

// apiRequests scrapes apiserver_request_total from a region's /metrics
// with the stack's admin token.
func (e *Env) apiRequests(ctx context.Context, region string) (apiCounts, error) {
	cfg, err := e.Stack.RestConfig(region)
	if err != nil {
		return nil, err
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape the API server of %s: %w", region, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape the API server of %s: %s", region, resp.Status)
	}
	return parseAPICounts(resp.Body)
}

func parseAPICounts(r io.Reader) (apiCounts, error) {
	const name = "apiserver_request_total{"
	out := apiCounts{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) {
			continue
		}
		end := strings.LastIndexByte(line, '}')
		if end < 0 {
			continue
		}
		labels := parseLabels(line[len(name):end])
		f := strings.Fields(line[end+1:])
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			continue
		}
		out[apiKey{Verb: labels["verb"], Resource: labels["resource"], Subresource: labels["subresource"], DryRun: labels["dry_run"] != ""}] += v
	}
	return out, sc.Err()
}

// parseLabels reads `a="x",b="y"` (Prometheus text escapes included).
func parseLabels(s string) map[string]string {
	out := map[string]string{}
	for len(s) > 0 {
		eq := strings.IndexByte(s, '=')
		if eq < 0 || eq+1 >= len(s) || s[eq+1] != '"' {
			break
		}
		key := strings.TrimSpace(strings.TrimPrefix(s[:eq], ","))
		var val strings.Builder
		i := eq + 2
		for ; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' && i+1 < len(s) {
				i++
			}
			val.WriteByte(s[i])
		}
		out[key] = val.String()
		s = s[min(i+1, len(s)):]
	}
	return out
}

// sub is b − a per series.
func (b apiCounts) sub(a apiCounts) apiCounts {
	out := apiCounts{}
	for k, v := range b {
		if d := v - a[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

// total adds the series that keep says to count; WATCH and the other
// long-running verbs never count, since they are streams, not requests.
func (c apiCounts) total(keep func(apiKey) bool) float64 {
	sum := 0.0
	for k, v := range c {
		if k.Verb == "WATCH" || k.Verb == "CONNECT" {
			continue
		}
		if keep == nil || keep(k) {
			sum += v
		}
	}
	return sum
}

func isAppKind(k apiKey) bool { return slices.Contains(appKinds, k.Resource) }

// isStatusWrite keeps the writes of Applications' status subresource: what
// the apps of Application objects send the control cluster.
func isStatusWrite(k apiKey) bool {
	return k.Resource == "applications" && k.Subresource == "status" && (k.Verb == "PUT" || k.Verb == "PATCH" || k.Verb == "APPLY")
}

// breakdown lists the counts of the app's kinds by verb, largest first:
// "GET 1000, APPLY (dry run) 1000, LIST 3".
func (c apiCounts) breakdown(per float64) string {
	byVerb := map[string]float64{}
	for k, v := range c {
		if !isAppKind(k) || k.Verb == "WATCH" {
			continue
		}
		verb := k.Verb
		if k.DryRun {
			verb += " (dry run)"
		}
		byVerb[verb] += v
	}
	verbs := make([]string, 0, len(byVerb))
	for v := range byVerb {
		verbs = append(verbs, v)
	}
	slices.SortFunc(verbs, func(a, b string) int {
		if byVerb[a] != byVerb[b] {
			if byVerb[a] > byVerb[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(verbs))
	for i, v := range verbs {
		parts[i] = fmt.Sprintf("%s %s", v, num(byVerb[v]/per))
	}
	return strings.Join(parts, ", ")
}

// isApplication keeps every request to Applications, their status included.
func isApplication(k apiKey) bool { return k.Resource == "applications" }
