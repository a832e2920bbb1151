package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/ferry-gitops/ferry/contract"
)

// pushResources is the size of the push scenario's app: a Deployment, its
// Service and a ConfigMap.
const pushResources = 3

// statusPoll is how often a waiting scenario queries an app's status: the
// resolution of the latencies measured that way.
const statusPoll = 25 * time.Millisecond

// PushToSynced measures, for a small app in one region and in three, the
// time from a push's notification (the refresh signal, or a signed GitHub
// webhook delivery when the worker serves one) to the app's status showing
// Synced at the pushed commit in every region. Each push changes every
// object and rolls the Deployment out. The modes alternate push by push.
// In one region, Flux pushes the same app after every Ferry push
// (flux_push.go), and Argo CD after Flux in one region and in all
// (argocd_push.go): each peer's latency, and the ratio.
func PushToSynced(ctx context.Context, e *Env, sec *Section) error {
	cfg := e.Cfg
	w, err := e.StartWorker(ctx, "push")
	if err != nil {
		return err
	}
	defer w.Stop()
	modes := []string{"refresh"}
	if w.Webhook {
		modes = append(modes, "webhook")
	}
	regionSets := [][]string{e.Stack.Regions[:1]}
	if len(e.Stack.Regions) > 1 {
		regionSets = append(regionSets, e.Stack.Regions)
	}

	var series []Series
	var text strings.Builder
	d := pushText{Mix: resourceMix(pushResources), StatusPoll: statusPoll.String(), Webhook: w.Webhook, Resources: pushResources}
	text.WriteString(say(d, "text"))
	var peer strings.Builder
	defer func() { sec.Text = text.String() + "\n" + peer.String() }()

	for _, regions := range regionSets {
		tag := fmt.Sprintf("%dr", len(regions))
		name := "push-" + tag
		repo, err := e.newRepo(ctx, name)
		if err != nil {
			return err
		}
		if err := repo.write(resourceFiles("app", pushResources, 0)); err != nil {
			return err
		}
		first, err := repo.commitAndPush(ctx, "rev 0")
		if err != nil {
			return err
		}
		spec := appSpec{Name: name, RepoURL: repo.URL, Path: "app", Namespace: name, Regions: regions, Poll: time.Hour}
		if _, err := e.applyApps(ctx, []appSpec{spec}, 1); err != nil {
			return err
		}
		wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
		_, _, err = e.waitSynced(wctx, name, first.SHA, regions, true, 200*time.Millisecond)
		cancel()
		if err != nil {
			return err
		}

		var fp *fluxPush
		var ap *argoPush
		if len(regions) == 1 {
			fp = e.startFluxPeer(ctx, &peer)
		}
		ap = e.startArgoPeer(ctx, &peer, regions)
		var watches []*healthWatch
		for _, r := range regions {
			hw, err := e.watchHealth(ctx, r, name)
			if err != nil {
				return err
			}
			defer hw.stop()
			watches = append(watches, hw)
		}
		var lags []float64
		latencies := map[string][]float64{}
		opDurations := map[string][]float64{}
		ferryAt := map[string]map[int]float64{"refresh": {}, "webhook": {}} // by notification and push
		total := 1 + cfg.Pushes*len(modes)
		for i := 1; i <= total; i++ {
			mode := modes[i%len(modes)]
			c, err := repo.pushRev(ctx, i)
			if err != nil {
				return err
			}
			began := time.Now()
			switch mode {
			case "refresh":
				err = e.Temporal.SignalWorkflow(ctx, contract.WorkflowID(name), "", contract.SignalRefresh, contract.RefreshRequest{})
			case "webhook":
				err = deliverGitHub(ctx, w.WebhookAddr, repo, c)
			}
			if err != nil {
				return err
			}
			wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			at, v, err := e.waitSynced(wctx, name, c.SHA, regions, false, statusPoll)
			cancel()
			if err != nil {
				return fmt.Errorf("push %d (%s): %w", i, mode, err)
			}
			lag, err := e.pushHealthLag(ctx, name, c.SHA, regions, watches, began)
			if err != nil {
				return fmt.Errorf("push %d (%s): %w", i, mode, err)
			}
			if fp != nil {
				if err := fp.push(ctx, i); err != nil {
					d.Push, d.Err = i, err.Error()
					peer.WriteString(say(d, "flux-stopped"))
					fp.flux.Stop()
					fp = nil
				}
			}
			if ap != nil {
				if err := ap.push(ctx, i, mode); err != nil {
					d.Push, d.Err = i, err.Error()
					peer.WriteString(say(d, "argocd-stopped"))
					_ = ap.argo.cd.Stop()
					ap = nil
				}
			}
			if i == 1 {
				continue // warm-up
			}
			lags = append(lags, lag)
			latencies[mode] = append(latencies[mode], at.Sub(began).Seconds())
			ferryAt[mode][i] = at.Sub(began).Seconds()
			if op := v.Status.OperationState; op != nil && op.FinishedAt != nil {
				opDurations[mode] = append(opDurations[mode], op.FinishedAt.Sub(op.StartedAt).Seconds())
			}
		}
		for _, mode := range modes {
			samples := latencies[mode]
			label := fmt.Sprintf("%d region", len(regions))
			if len(regions) > 1 {
				label += "s"
			}
			sec.Figures = append(sec.Figures, &Figure{
				ID:        fmt.Sprintf("push-%s-%s", tag, mode),
				Title:     fmt.Sprintf("Push to Synced, %s, %s", label, mode),
				What:      say(pushText{Mode: mode, Label: label, Regions: regions}, "what"),
				Unit:      "s",
				Samples:   samples,
				Reproduce: cfg.reproduce(ScenarioPush, fmt.Sprintf("-pushes %d", cfg.Pushes)),
			})
			s, op := Summarize(samples), Summarize(opDurations[mode])
			fmt.Fprintf(&text, "| %s | %s | %d | %s s | %s s | %s s | %s s | %s s |\n", strings.Join(regions, ", "), say(pushText{Mode: mode}, "mode"),
				s.N, num(s.Median), num(s.P95), num(s.Min), num(s.Max), num(op.Median))
			series = append(series, Series{Name: fmt.Sprintf("%s, %s", label, mode), Samples: samples})
		}
		sec.Figures = append(sec.Figures, &Figure{
			ID: fmt.Sprintf("push-%s-health-lag", tag), Title: fmt.Sprintf("Health lag after a push, %d region(s)", len(regions)),
			What: say(pushText{Regions: regions}, "what-lag"), Unit: "s", Samples: lags,
			Reproduce: cfg.reproduce(ScenarioPush, fmt.Sprintf("-pushes %d", cfg.Pushes)),
		})
		if len(regions) == 1 {
			if err := e.pushFloor(ctx, sec, regions[0], latencies["refresh"]); err != nil {
				return err
			}
		}
		if fp != nil {
			fp.flux.Stop()
			series = append(series, fp.report(sec, &text, &peer, ferryAt["refresh"], cfg.reproduce(ScenarioPush, fmt.Sprintf("-pushes %d", cfg.Pushes))))
		}
		if ap != nil {
			_ = ap.argo.cd.Stop()
			series = append(series, ap.report(sec, &text, ferryAt, cfg.reproduce(ScenarioPush, fmt.Sprintf("-pushes %d", cfg.Pushes)))...)
		}
	}
	text.WriteString(say(d, "end"))
	img := "push-to-synced.png"
	if err := PlotCDF(filepath.Join(cfg.Out, img), "Push to Synced: cumulative distribution", "seconds from notification to Synced in every region (Flux: to its Kustomization Ready)", series); err != nil {
		return err
	}
	sec.Images = append(sec.Images, img)
	return nil
}

// pushHealthLag waits for the app to show Healthy at sha after a push,
// and is the time from the rollout's end (the Deployment of every region
// turned Healthy after the push began) to then.
func (e *Env) pushHealthLag(ctx context.Context, name, sha string, regions []string, watches []*healthWatch, began time.Time) (float64, error) {
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	at, _, err := e.waitSynced(wctx, name, sha, regions, true, statusPoll)
	if err != nil {
		return 0, err
	}
	return healthLag(ctx, watches, (pushResources+9)/10, began, at)
}

// pushText is the data of text/push.md.tmpl.
type pushText struct {
	Mix        string // resourceMix of Resources
	Resources  int
	StatusPoll string
	// Webhook: the worker serves POST /api/webhook.
	Webhook bool
	// Mode ("refresh" or "webhook"), Label ("1 region") and Regions name
	// the figure; Push and Err say why Flux stopped.
	Mode, Label string
	Regions     []string
	// Region is the floor's.
	Region string
	Push   int
	Err    string
}

func (pushText) textFile() string { return "push" }
