package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/ferry-gitops/ferry/workflows"
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
// (flux_push.go): the peer's latency, and the ratio.
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
	fmt.Fprintf(&text, "App: %s, automated sync with prune, poll interval 1 h (so only the notification can start the reconcile). "+
		"Each push rewrites every object (a new value in the ConfigMap, a new pod template annotation, so the Deployment rolls out on kwok); "+
		"the clock starts once `git push` has returned, right before the notification is sent, and stops at the first status query "+
		"(every %s) that shows Synced at the pushed SHA in every region. One worker process serves the control queue and every region; "+
		"Redis is the manifest cache. The first push of each app is a warm-up, not counted.\n\n", resourceMix(pushResources), statusPoll)
	if w.Webhook {
		text.WriteString("Notification: the `refresh` signal sent with the Temporal client (what `ferry app refresh` sends, without the CLI's start-up), " +
			"and a GitHub push delivery signed with `X-Hub-Signature-256` posted to the worker's `POST /api/webhook`, alternately.\n\n")
	} else {
		text.WriteString("Notification: the `refresh` signal sent with the Temporal client (what `ferry app refresh` sends, without the CLI's start-up). " +
			"**The worker does not serve `POST /api/webhook` yet** (a GET to it, which the contract answers 405, found nothing listening on " +
			"`--webhook-addr`), so no webhook delivery was measured; once it does, this scenario sends signed GitHub deliveries too, with no change here.\n\n")
	}
	var peer strings.Builder
	text.WriteString("| regions | notification | pushes | p50 | p95 | min | max | sync operation p50 |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n")
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
		if len(regions) == 1 {
			fp = e.startFluxPeer(ctx, &peer)
		}
		latencies := map[string][]float64{}
		opDurations := map[string][]float64{}
		refreshAt := map[int]float64{}
		total := 1 + cfg.Pushes*len(modes)
		for i := 1; i <= total; i++ {
			mode := modes[i%len(modes)]
			if err := repo.write(resourceFiles("app", pushResources, i)); err != nil {
				return err
			}
			c, err := repo.commitAndPush(ctx, fmt.Sprintf("rev %d", i))
			if err != nil {
				return err
			}
			began := time.Now()
			switch mode {
			case "refresh":
				err = e.Temporal.SignalWorkflow(ctx, workflows.WorkflowID(name), "", workflows.SignalRefresh, workflows.RefreshRequest{})
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
			if fp != nil {
				if err := fp.push(ctx, i); err != nil {
					fmt.Fprintf(&peer, "**Flux stopped measuring at push %d:** %s\n\n", i, oneLine(err.Error()))
					fp.flux.Stop()
					fp = nil
				}
			}
			if i == 1 {
				continue // warm-up
			}
			latencies[mode] = append(latencies[mode], at.Sub(began).Seconds())
			if mode == "refresh" {
				refreshAt[i] = at.Sub(began).Seconds()
			}
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
				ID:    fmt.Sprintf("push-%s-%s", tag, mode),
				Title: fmt.Sprintf("Push to Synced, %s, %s", label, mode),
				What: fmt.Sprintf("Seconds from the %s after a push to Synced at the pushed commit in %s (%s).",
					modeName(mode), label, strings.Join(regions, ", ")),
				Unit:      "s",
				Samples:   samples,
				Reproduce: cfg.reproduce(ScenarioPush, fmt.Sprintf("-pushes %d", cfg.Pushes)),
			})
			s, op := Summarize(samples), Summarize(opDurations[mode])
			fmt.Fprintf(&text, "| %s | %s | %d | %s s | %s s | %s s | %s s | %s s |\n", strings.Join(regions, ", "), modeName(mode),
				s.N, num(s.Median), num(s.P95), num(s.Min), num(s.Max), num(op.Median))
			series = append(series, Series{Name: fmt.Sprintf("%s, %s", label, mode), Samples: samples})
		}
		if len(regions) == 1 {
			if err := e.pushFloor(ctx, sec, regions[0], latencies["refresh"]); err != nil {
				return err
			}
		}
		if fp != nil {
			fp.flux.Stop()
			series = append(series, fp.report(sec, &text, &peer, refreshAt, cfg.reproduce(ScenarioPush, fmt.Sprintf("-pushes %d", cfg.Pushes))))
		}
	}
	text.WriteString("\nThe sync operation column is the operation's own StartedAt–FinishedAt (apply, then wait for health) from the status; the rest of the latency is the reconcile before it (ls-remote, render of the new commit, compare) and Temporal's round trips.\n")
	img := "push-to-synced.png"
	if err := PlotCDF(filepath.Join(cfg.Out, img), "Push to Synced: cumulative distribution", "seconds from notification to Synced in every region (Flux: to its Kustomization Ready)", series); err != nil {
		return err
	}
	sec.Images = append(sec.Images, img)
	return nil
}

func modeName(mode string) string {
	if mode == "webhook" {
		return "signed GitHub webhook delivery"
	}
	return "refresh signal"
}
