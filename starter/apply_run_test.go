package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/app"
)

func testInputs(names ...string) []applyInput {
	inputs := make([]applyInput, len(names))
	for i, n := range names {
		a := &app.Application{}
		a.Metadata.Name = n
		inputs[i] = applyInput{source: n + ".yaml", app: a}
	}
	return inputs
}

func appliedLine(name string) string {
	return fmt.Sprintf("application %q applied (workflow app/%s)\n", name, name)
}

// TestApplyAllInInputOrder: the lines come out in input order whatever
// order the applies end in, and no more than parallel run at once.
func TestApplyAllInInputOrder(t *testing.T) {
	names := make([]string, 40)
	for i := range names {
		names[i] = fmt.Sprintf("app-%02d", i)
	}
	var running, most atomic.Int32
	apply := func(_ context.Context, a *app.Application) error {
		n := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		// Later apps end sooner, so that the order has to be restored.
		var i int
		fmt.Sscanf(a.Metadata.Name, "app-%d", &i)
		time.Sleep(time.Duration(len(names)-i) * 200 * time.Microsecond)
		return nil
	}
	var stdout, stderr bytes.Buffer
	require.NoError(t, applyAll(context.Background(), testInputs(names...), 3, apply, &stdout, &stderr))
	var want strings.Builder
	for _, n := range names {
		want.WriteString(appliedLine(n))
	}
	require.Equal(t, want.String(), stdout.String())
	require.Empty(t, stderr.String())
	require.LessOrEqual(t, most.Load(), int32(3))
	require.Greater(t, most.Load(), int32(1), "applies ran side by side")
}

// TestApplyAllFailures: every app is tried; the failures are reported in
// order on stderr with the summary as the error; the others are applied.
func TestApplyAllFailures(t *testing.T) {
	var mu sync.Mutex
	var applied []string
	apply := func(_ context.Context, a *app.Application) error {
		if strings.HasPrefix(a.Metadata.Name, "bad") {
			return errors.New("connection reset")
		}
		mu.Lock()
		applied = append(applied, a.Metadata.Name)
		mu.Unlock()
		return nil
	}
	var stdout, stderr bytes.Buffer
	err := applyAll(context.Background(), testInputs("a", "bad1", "b", "bad2", "c"), 2, apply, &stdout, &stderr)
	require.EqualError(t, err, "2 of 5 applications failed (bad1, bad2); the others are applied: "+
		"fix the cause and run the same command again (apply is idempotent)")
	require.Equal(t, appliedLine("a")+appliedLine("b")+appliedLine("c"), stdout.String())
	require.Equal(t, "ferry: app \"bad1\": apply: connection reset\nferry: app \"bad2\": apply: connection reset\n", stderr.String())
	require.ElementsMatch(t, []string{"a", "b", "c"}, applied)
}

// TestApplyAllOneApp: one app's error is returned as ferry app apply -f
// FILE has always returned it, with nothing else printed.
func TestApplyAllOneApp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := applyAll(context.Background(), testInputs("solo"), 8, func(context.Context, *app.Application) error {
		return errors.New("deadline exceeded")
	}, &stdout, &stderr)
	require.EqualError(t, err, `app "solo": apply: deadline exceeded`)
	require.Empty(t, stdout.String())
	require.Empty(t, stderr.String())

	require.NoError(t, applyAll(context.Background(), testInputs("solo"), 8,
		func(context.Context, *app.Application) error { return nil }, &stdout, &stderr))
	require.Equal(t, appliedLine("solo"), stdout.String())
}

func TestApplyFailedErrorNamesAtMostTen(t *testing.T) {
	failed := make([]string, 13)
	for i := range failed {
		failed[i] = fmt.Sprint("app", i)
	}
	err := &applyFailedError{failed: failed, total: 1000}
	require.Contains(t, err.Error(), "13 of 1000 applications failed (app0, app1, app2, app3, app4, app5, app6, app7, app8, app9 and 3 more)")
}
