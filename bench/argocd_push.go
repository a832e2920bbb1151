package bench

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ferry-gitops/ferry/internal/devenv"
)

// argoPush is Argo CD's side of the push scenario: the same small app in a
// repo of its own, an automated Application of it per region (as Argo CD's
// users deploy one app to several clusters), and the latency of every push
// to all of them Synced.
type argoPush struct {
	argo    *argo
	repo    *gitRepo
	name    string
	regions []string
	apps    []string // the Applications, one per region
	// latency of each push by its notification ("refresh", "webhook") and
	// number (push 1 is the warm-up).
	latency map[string]map[int]float64
}

// startArgoPush starts Argo CD, with its API server for its webhook, and
// brings the app to Synced and Healthy at its first commit in every
// region. The resync period is an hour, so that only the notification
// starts a comparison, as Ferry's poll interval of an hour does.
func (e *Env) startArgoPush(ctx context.Context, regions []string) (*argoPush, error) {
	tag := fmt.Sprintf("%dr", len(regions))
	a, err := e.startArgo(ctx, devenv.ArgoCDOptions{Name: "argocd-push-" + tag, Resync: time.Hour, Server: true, WebhookSecret: webhookSecret})
	if err != nil {
		return nil, err
	}
	p := &argoPush{argo: a, name: "argocd-push-" + tag, regions: regions, latency: map[string]map[int]float64{}}
	if p.repo, err = e.newRepo(ctx, p.name); err != nil {
		return p, err
	}
	if err := p.repo.write(resourceFiles("app", pushResources, 0)); err != nil {
		return p, err
	}
	first, err := p.repo.commitAndPush(ctx, "rev 0")
	if err != nil {
		return p, err
	}
	for _, r := range regions {
		name := p.name
		if len(regions) > 1 {
			name += "-" + r
		}
		if err := a.apply(ctx, argoApp{Name: name, RepoURL: p.repo.URL, Path: "app", Namespace: p.name, Dest: r}); err != nil {
			return p, err
		}
		p.apps = append(p.apps, name)
	}
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	for _, name := range p.apps {
		if _, err = a.waitApp(wctx, name, 200*time.Millisecond, func(s argoStatus) bool { return s.syncedAt(first.SHA) && s.Health == "Healthy" }); err != nil {
			return p, err
		}
	}
	return p, nil
}

// push commits rev i, pushes it, notifies Argo CD as mode says and waits
// until every Application of the repo is Synced at the pushed commit.
// "refresh" sets the refresh annotation on each, as Argo CD's webhook
// refreshes each app of a pushed repo; "webhook" delivers the push to its
// API server's webhook, as GitHub would (refresh when no API server runs).
func (p *argoPush) push(ctx context.Context, i int, mode string) error {
	if p.argo.cd.ServerAddr == "" {
		mode = "refresh"
	}
	c, err := p.repo.pushRev(ctx, i)
	if err != nil {
		return err
	}
	began := time.Now()
	switch mode {
	case "webhook":
		err = deliverGitHub(ctx, p.argo.cd.ServerAddr, p.repo, c)
	default:
		for _, name := range p.apps {
			if err = p.argo.refresh(ctx, name); err != nil {
				break
			}
		}
	}
	if err != nil {
		return fmt.Errorf("Argo CD push %d (%s): %w", i, mode, err)
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var last time.Time
	for _, name := range p.apps {
		at, err := p.argo.waitApp(wctx, name, statusPoll, func(s argoStatus) bool { return s.syncedAt(c.SHA) })
		if err != nil {
			return fmt.Errorf("Argo CD push %d (%s): %w", i, mode, err)
		}
		if at.After(last) {
			last = at
		}
	}
	if p.latency[mode] == nil {
		p.latency[mode] = map[int]float64{}
	}
	p.latency[mode][i] = last.Sub(began).Seconds()
	return nil
}

// argoPushText is the data of text/argocd_push.md.tmpl.
type argoPushText struct {
	Version, Home, Logs    string
	Annotation, StatusPoll string
	// Regions get an Application each; Webhook: its API server ran, and
	// Mode is the notification of a figure.
	Regions []string
	Webhook bool
	Mode    string
	Err     string // why Argo CD was not measured
}

func (argoPushText) textFile() string { return "argocd_push" }

func (p *argoPush) text() argoPushText {
	return argoPushText{Version: p.argo.cd.Version, Home: p.argo.cd.Home, Logs: p.argo.logs(),
		Annotation: argoRefreshAnnotation, StatusPoll: statusPoll.String(), Regions: p.regions, Webhook: p.argo.cd.ServerAddr != ""}
}

// startArgoPeer starts Argo CD's side of the push scenario in regions and
// describes it in peer; when Argo CD cannot run it says why there and
// returns nil.
func (e *Env) startArgoPeer(ctx context.Context, peer *strings.Builder, regions []string) *argoPush {
	p, err := e.startArgoPush(ctx, regions)
	if err != nil {
		if p != nil {
			_ = p.argo.cd.Stop()
		}
		peer.WriteString(say(argoPushText{Err: err.Error()}, "not-measured"))
		return nil
	}
	var d argoPushText = p.text()
	peer.WriteString(say(d, "peer"))
	return p
}

// report adds Argo CD's figure of each notification, the ratio against
// Ferry's of the same notification (each Ferry push with the Argo CD push
// right after it) and a row of the table, and returns its series for the
// plot. ferry holds Ferry's latencies by notification and push.
func (p *argoPush) report(sec *Section, table *strings.Builder, ferry map[string]map[int]float64, repro string) []Series {
	tag, label := fmt.Sprintf("%dr", len(p.regions)), "1 region"
	if len(p.regions) > 1 {
		label = fmt.Sprintf("%d regions", len(p.regions))
	}
	var out []Series
	for _, mode := range []string{"refresh", "webhook"} {
		latency := p.latency[mode]
		if len(latency) == 0 {
			continue
		}
		var samples, ours, theirs []float64
		for _, i := range slices.Sorted(maps.Keys(latency)) {
			if i == 1 {
				continue // warm-up
			}
			b := latency[i]
			samples = append(samples, b)
			if a, ok := ferry[mode][i]; ok {
				ours, theirs = append(ours, a), append(theirs, b)
			}
		}
		var d argoPushText = p.text()
		d.Mode = mode
		id, title := "push-"+tag+"-argocd", "Push to Synced, "+label+", Argo CD"
		if mode == "webhook" {
			id, title = id+"-webhook", title+", webhook"
		}
		ratioID := strings.Replace(id, "-argocd", "-ratio-argocd", 1)
		sec.Figures = append(sec.Figures,
			&Figure{ID: id, Title: title, Unit: "s", Samples: samples, Reproduce: repro, What: say(d, "what")},
			&Figure{ID: ratioID, Title: "Push ratio, " + label + ", Ferry " + mode + " / Argo CD " + mode, Unit: "×", Samples: ratios(ours, theirs),
				Reproduce: repro, What: say(d, "what-ratio")},
		)
		s := Summarize(samples)
		fmt.Fprintf(table, "| %s | %s | %d | %s s | %s s | %s s | %s s | – |\n",
			strings.Join(p.regions, ", "), say(d, "notification"), s.N, num(s.Median), num(s.P95), num(s.Min), num(s.Max))
		out = append(out, Series{Name: label + ", Argo CD, " + mode, Samples: samples})
	}
	return out
}
