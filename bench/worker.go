package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// webhookSecret signs the GitHub deliveries the push scenario sends; the
// worker reads it from FERRY_WEBHOOK_GITHUB_SECRET.
const webhookSecret = "ferry-bench-webhook-secret"

// Worker is a ferry-worker process serving the control queue and every
// region of the stack, as `make run` runs it.
type Worker struct {
	cmd         *exec.Cmd
	done        chan struct{}
	Log         string
	MetricsAddr string
	WebhookAddr string
	// Webhook is true when the worker answers on /api/webhook.
	Webhook bool
}

// StartWorker starts ferry-worker and waits for its /healthz.
func (e *Env) StartWorker(ctx context.Context, name string, extra ...string) (*Worker, error) {
	metrics, err := freeAddr()
	if err != nil {
		return nil, err
	}
	webhook, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cacheDir, err := e.tempDir("worker-cache-" + name)
	if err != nil {
		return nil, err
	}
	s := e.Stack
	args := []string{"--control", "--regions", strings.Join(s.Regions, ","),
		"--temporal-address", s.TemporalAddress, "--namespace", s.Namespace,
		"--kubeconfig", s.Kubeconfig, "--redis-addr", s.RedisAddr, "--cache-dir", cacheDir,
		"--metrics-addr", metrics, "--webhook-addr", webhook}
	for _, r := range s.Regions {
		args = append(args, "--region", r)
	}
	args = append(args, e.Cfg.WorkerArgs...)
	args = append(args, extra...)
	// The log goes next to the report, so it outlives the stack's state dir.
	logDir := filepath.Join(e.Cfg.Out, "logs")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, err
	}
	w := &Worker{
		Log:         filepath.Join(logDir, "worker-"+name+".log"),
		MetricsAddr: metrics, WebhookAddr: webhook, done: make(chan struct{}),
	}
	logFile, err := os.Create(w.Log)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child holds its own descriptor
	w.cmd = exec.Command(filepath.Join(e.Cfg.BinDir, "ferry-worker"), args...)
	w.cmd.Env = append(s.Environ(), "FERRY_WEBHOOK_GITHUB_SECRET="+webhookSecret)
	w.cmd.Stdout, w.cmd.Stderr = logFile, logFile
	w.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := w.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start ferry-worker: %w", err)
	}
	go func() { _ = w.cmd.Wait(); close(w.done) }()
	e.cleanups = append(e.cleanups, w.Stop)

	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := http.Get("http://" + metrics + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case <-w.done:
			return nil, fmt.Errorf("ferry-worker exited at start: see %s", w.Log)
		case <-ctx.Done():
			w.Stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			w.Stop()
			return nil, fmt.Errorf("ferry-worker not healthy after a minute: see %s", w.Log)
		}
	}
	w.Webhook = probeWebhook(webhook)
	return w, nil
}

// probeWebhook reports whether a webhook endpoint answers: the contract
// says a GET gets 405. A worker without the webhook refuses the connection.
func probeWebhook(addr string) bool {
	for range 20 {
		resp, err := http.Get("http://" + addr + "/api/webhook")
		if err == nil {
			resp.Body.Close()
			return resp.StatusCode == http.StatusMethodNotAllowed
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// logOffset is the size of the worker's log now.
func (w *Worker) logOffset() int64 {
	fi, err := os.Stat(w.Log)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// throttled counts the waits client-go logged between two offsets of the
// worker's log: requests its client-side rate limiter held back (client-go
// logs a wait of a second or more).
func (w *Worker) throttled(from, to int64) int {
	f, err := os.Open(w.Log)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(io.NewSectionReader(f, from, to-from))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "client-side throttling") {
			n++
		}
	}
	return n
}

// Pid is the worker's process id.
func (w *Worker) Pid() int { return w.cmd.Process.Pid }

// Stop sends SIGTERM, then SIGKILL to the group after 15 s.
func (w *Worker) Stop() {
	select {
	case <-w.done:
		return
	default:
	}
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.done:
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL)
		<-w.done
	}
}

// Metric sums every series of a metric on the worker's /metrics.
func (w *Worker) Metric(name string) (float64, error) {
	resp, err := http.Get("http://" + w.MetricsAddr + "/metrics")
	if err != nil {
		return 0, fmt.Errorf("scrape the worker's metrics: %w", err)
	}
	defer resp.Body.Close()
	return sumMetric(resp.Body, name)
}

// sumMetric adds the values of every sample of name in Prometheus text.
func sumMetric(r io.Reader, name string) (float64, error) {
	samples, ok := readSamples(r)[name]
	if !ok {
		return 0, fmt.Errorf("no metric %s", name)
	}
	return total(samples), nil
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// Exited reports whether the worker has died.
func (w *Worker) Exited() error {
	select {
	case <-w.done:
		return fmt.Errorf("ferry-worker exited (%v): see %s", w.cmd.ProcessState, w.Log)
	default:
		return nil
	}
}

// taskLatency is the worker's Temporal SDK histograms of how long tasks
// waited in their queue before the worker took them (schedule-to-start).
type taskLatency struct {
	workflowSum, workflowCount, activitySum, activityCount float64
}

func (w *Worker) taskLatency() taskLatency {
	var t taskLatency
	const wf, act = "temporal_workflow_task_schedule_to_start_latency_seconds", "temporal_activity_schedule_to_start_latency_seconds"
	t.workflowSum, _ = w.Metric(wf + "_sum")
	t.workflowCount, _ = w.Metric(wf + "_count")
	t.activitySum, _ = w.Metric(act + "_sum")
	t.activityCount, _ = w.Metric(act + "_count")
	return t
}

// describeSince says how long tasks waited on average since an earlier
// reading: a worker short of pollers or of CPU shows here first.
func (t taskLatency) describeSince(before taskLatency) string {
	wf := taskWait{Count: t.workflowCount - before.workflowCount}
	if wf.Count > 0 {
		wf.MeanMs = (t.workflowSum - before.workflowSum) / wf.Count * 1000
	}
	act := taskWait{Count: t.activityCount - before.activityCount}
	if act.Count > 0 {
		act.MeanMs = (t.activitySum - before.activitySum) / act.Count * 1000
	}
	return say(stackText{Workflow: wf, Activity: act}, "task-latency")
}

// taskWait is the tasks that a queue's pollers took, and their mean wait
// (schedule to start) in milliseconds.
type taskWait struct {
	Count, MeanMs float64
}
