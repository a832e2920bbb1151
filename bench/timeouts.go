package bench

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	"go.temporal.io/sdk/converter"
)

// timedOutRunning tells whether f is an activity's timeout while it ran:
// its heartbeat or its start-to-close, not its wait for a worker.
func timedOutRunning(f *failurepb.Failure) bool {
	switch f.GetTimeoutFailureInfo().GetTimeoutType() {
	case enumspb.TIMEOUT_TYPE_HEARTBEAT, enumspb.TIMEOUT_TYPE_START_TO_CLOSE:
		return true
	}
	return false
}

// timeoutOf describes an activity's timeout while it ran: its type, the
// timeout's, and its last heartbeat's details. None: no heartbeat of that
// attempt reached the server; the worker never had the task, or the
// attempt ended before its first heartbeat (2 s) and its completion did
// not reach the server (the worker's log says "Task processing failed"
// then).
func timeoutOf(actType string, f *failurepb.Failure) string {
	info := f.GetTimeoutFailureInfo()
	kind := strings.ToLower(strings.TrimPrefix(info.GetTimeoutType().String(), "TimeoutType"))
	last := "none"
	if p := info.GetLastHeartbeatDetails(); len(p.GetPayloads()) > 0 {
		var details string
		if err := converter.GetDefaultDataConverter().FromPayloads(p, &details); err != nil {
			details = "unreadable"
		}
		last = fmt.Sprintf("%q", details)
	}
	return fmt.Sprintf("%s, %s timeout, last heartbeat %s", actType, kind, last)
}

// tally counts equal descriptions: "3× d", most frequent first.
func tally(ds []string) []string {
	n := map[string]int{}
	for _, d := range ds {
		n[d]++
	}
	out := make([]string, 0, len(n))
	for d := range n {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b string) int { return cmp.Or(cmp.Compare(n[b], n[a]), strings.Compare(a, b)) })
	for i, d := range out {
		out[i] = fmt.Sprintf("%d× %s", n[d], d)
	}
	return out
}
