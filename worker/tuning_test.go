package main

import (
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
)

// TestTuningFlags: the tuning flags reach the Temporal worker's options,
// and the values the SDK would panic on are refused with the flag's name.
func TestTuningFlags(t *testing.T) {
	cfg, err := parseFlags([]string{"--control", "--workflow-task-pollers", "8", "--workflow-task-slots", "50",
		"--activity-task-pollers", "auto", "--activity-task-slots", "40", "--local-activity-slots", "30",
		"--sticky-schedule-to-start", "2s"}, io.Discard)
	require.NoError(t, err)
	var opts worker.Options
	cfg.tuning.apply(&opts)
	assert.Equal(t, 8, opts.MaxConcurrentWorkflowTaskPollers)
	assert.Nil(t, opts.WorkflowTaskPollerBehavior)
	assert.Equal(t, 50, opts.MaxConcurrentWorkflowTaskExecutionSize)
	assert.Zero(t, opts.MaxConcurrentActivityTaskPollers, "auto leaves the fixed number out")
	assert.NotNil(t, opts.ActivityTaskPollerBehavior)
	assert.Equal(t, 40, opts.MaxConcurrentActivityExecutionSize)
	assert.Equal(t, 30, opts.MaxConcurrentLocalActivityExecutionSize)
	assert.Equal(t, 2*time.Second, opts.StickyScheduleToStartTimeout)

	cfg, err = parseFlags([]string{"--control"}, io.Discard)
	require.NoError(t, err)
	opts = worker.Options{}
	cfg.tuning.apply(&opts)
	assert.Equal(t, worker.Options{}, opts, "without the flags the SDK's defaults stand")

	_, err = parseFlags([]string{"--control", "--workflow-task-pollers", "1", "--workflow-task-slots", "1",
		"--activity-task-slots", "-3", "--sticky-schedule-to-start", "-1s"}, io.Discard)
	require.Error(t, err)
	for _, want := range []string{"--workflow-task-pollers 1", "--workflow-task-slots 1", "--activity-task-slots -3", "--sticky-schedule-to-start -1s"} {
		assert.Contains(t, err.Error(), want)
	}
	_, err = parseFlags([]string{"--control", "--workflow-task-pollers", "many"}, io.Discard)
	require.ErrorContains(t, err, "write a number of pollers, or auto")
}

// TestTemporalCompression: the worker's gRPC messages to Temporal are
// uncompressed unless --temporal-compression gzip (or its environment
// twin) asks for the SDK's gzip; anything else is refused.
func TestTemporalCompression(t *testing.T) {
	cfg, err := parseFlags([]string{"--control"}, io.Discard)
	require.NoError(t, err)
	var conn client.ConnectionOptions
	cfg.tuning.connection(&conn)
	assert.IsType(t, &client.GrpcCompressionNone{}, conn.GrpcCompression)

	cfg, _, err = parse([]string{"--control"}, func(k string) (string, bool) {
		return "gzip", k == "FERRY_TEMPORAL_COMPRESSION"
	}, io.Discard)
	require.NoError(t, err)
	require.NoError(t, cfg.check())
	conn = client.ConnectionOptions{}
	cfg.tuning.connection(&conn)
	assert.IsType(t, &client.GrpcCompressionGzip{}, conn.GrpcCompression)

	_, err = parseFlags([]string{"--control", "--temporal-compression", "zstd"}, io.Discard)
	require.ErrorContains(t, err, `--temporal-compression "zstd": write none or gzip`)
}
