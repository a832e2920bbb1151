package main

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
)

// tuning is how much a worker takes on at once: the Temporal worker options
// that bound a fleet. Zero keeps the SDK's default (bench/README.md has
// the measurements behind the defaults).
type tuning struct {
	workflowPollers pollersFlag
	activityPollers pollersFlag
	workflowSlots   int
	activitySlots   int
	localSlots      int
	stickyCache     int
	stickyTimeout   time.Duration
	// compression of the gRPC requests to Temporal (and so of its answers).
	compression string
}

// Compressions of --temporal-compression.
const (
	compressionNone = "none"
	compressionGzip = "gzip"
)

// pollersFlag is a number of pollers, or "auto": the SDK scales them
// between 1 and 100 as tasks come.
type pollersFlag struct {
	n    int
	auto bool
}

func (p *pollersFlag) String() string {
	switch {
	case p == nil:
		return ""
	case p.auto:
		return "auto"
	}
	return strconv.Itoa(p.n)
}

func (p *pollersFlag) Set(v string) error {
	if strings.TrimSpace(v) == "auto" {
		*p = pollersFlag{auto: true}
		return nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return fmt.Errorf("write a number of pollers, or auto")
	}
	*p = pollersFlag{n: n}
	return nil
}

func (p *pollersFlag) Get() any { return p.String() }

// Expected says what a value must look like (flagenv).
func (p *pollersFlag) Expected() string { return "write a number of pollers, or auto" }

func (t *tuning) define(fs *flag.FlagSet) {
	fs.Var(&t.workflowPollers, "workflow-task-pollers",
		"`N` goroutines of a control worker polling queue ferry for workflow tasks, and as many polling ferry-onboard, at least 2, or auto (the SDK scales them, 1 to 100); 0: the SDK's 2")
	fs.IntVar(&t.workflowSlots, "workflow-task-slots", 0,
		"the most workflow tasks (`N`, at least 2) a control worker runs at once on each of ferry and ferry-onboard; 0: the SDK's 1000")
	fs.Var(&t.activityPollers, "activity-task-pollers",
		"`N` goroutines polling each queue the worker serves for activity tasks, or auto; 0: the SDK's 2")
	fs.IntVar(&t.activitySlots, "activity-task-slots", 0,
		"the most activities (`N`) a worker runs at once on each queue it serves; 0: the SDK's 1000")
	fs.IntVar(&t.localSlots, "local-activity-slots", 0,
		"the most local activities (`N`: the Git ls-remote of a reconcile) a control worker runs at once; 0: the SDK's 1000")
	fs.IntVar(&t.stickyCache, "sticky-cache-size", 0,
		"how many app workflows (`N`) the worker keeps in memory between their tasks, so that a task does not replay the history; 0: the SDK's 10000")
	fs.StringVar(&t.compression, "temporal-compression", compressionNone,
		"`COMPRESSION` of the gRPC messages to and from Temporal: none, or gzip (the SDK's default), which costs the worker and the server a gzip stream per message and pays where bandwidth costs more than CPU")
	fs.DurationVar(&t.stickyTimeout, "sticky-schedule-to-start", 0,
		"how long (`DURATION`) a workflow task waits for the worker that holds the workflow in memory before any worker may take it; 0: the SDK's 5s")
}

func (t *tuning) check() error {
	var errs []error
	if p := t.workflowPollers; !p.auto && p.n == 1 {
		errs = append(errs, fmt.Errorf("--workflow-task-pollers 1: give 2 or more (the SDK alternates its pollers between the sticky and the shared queue), auto, or 0 for the default"))
	}
	if t.workflowSlots == 1 || t.workflowSlots < 0 {
		errs = append(errs, fmt.Errorf("--workflow-task-slots %d: give 2 or more, or 0 for the default", t.workflowSlots))
	}
	for name, n := range map[string]int{"activity-task-slots": t.activitySlots, "local-activity-slots": t.localSlots, "sticky-cache-size": t.stickyCache} {
		if n < 0 {
			errs = append(errs, fmt.Errorf("--%s %d: give a positive number, or 0 for the default", name, n))
		}
	}
	if t.compression != compressionNone && t.compression != compressionGzip {
		errs = append(errs, fmt.Errorf("--temporal-compression %q: write none or gzip", t.compression))
	}
	if t.stickyTimeout < 0 {
		errs = append(errs, fmt.Errorf("--sticky-schedule-to-start %s: give a positive duration, or 0 for the default", t.stickyTimeout))
	}
	return errors.Join(errs...)
}

// connection sets the client's connection options.
func (t *tuning) connection(opts *client.ConnectionOptions) {
	if t.compression == compressionGzip {
		opts.GrpcCompression = &client.GrpcCompressionGzip{}
	} else {
		opts.GrpcCompression = &client.GrpcCompressionNone{}
	}
}

// apply sets the options on opts; the sticky cache is the process's, set
// before any worker starts.
func (t *tuning) apply(opts *worker.Options) {
	if t.stickyCache > 0 {
		worker.SetStickyWorkflowCacheSize(t.stickyCache)
	}
	opts.MaxConcurrentWorkflowTaskExecutionSize = t.workflowSlots
	opts.MaxConcurrentActivityExecutionSize = t.activitySlots
	opts.MaxConcurrentLocalActivityExecutionSize = t.localSlots
	opts.StickyScheduleToStartTimeout = t.stickyTimeout
	if t.workflowPollers.auto {
		opts.WorkflowTaskPollerBehavior = worker.NewPollerBehaviorAutoscaling(worker.PollerBehaviorAutoscalingOptions{})
	} else {
		opts.MaxConcurrentWorkflowTaskPollers = t.workflowPollers.n
	}
	if t.activityPollers.auto {
		opts.ActivityTaskPollerBehavior = worker.NewPollerBehaviorAutoscaling(worker.PollerBehaviorAutoscalingOptions{})
	} else {
		opts.MaxConcurrentActivityTaskPollers = t.activityPollers.n
	}
}
