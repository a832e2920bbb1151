package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/app"
)

func TestPrintWindows(t *testing.T) {
	p := &app.AppProject{Metadata: app.ObjectMeta{Name: "team-a"}, Spec: app.ProjectSpec{SyncWindows: []app.SyncWindow{
		{Kind: "deny", Schedule: "0 12 * * *", Duration: "2m", Applications: []string{"web"}},
		{Kind: "allow", Schedule: "0 22 * * *", Duration: "1h", TimeZone: "Europe/Berlin", Namespaces: []string{"a", "b"}, ManualSync: true},
	}}}
	now := time.Date(2026, 12, 1, 12, 1, 0, 0, time.UTC)
	var out bytes.Buffer
	require.NoError(t, printWindows(&out, p, now, ""))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 3, out.String())
	require.Equal(t, []string{"ID", "KIND", "SCHEDULE", "DURATION", "TIMEZONE", "APPLICATIONS", "NAMESPACES", "CLUSTERS",
		"MANUALSYNC", "ACTIVE", "NEXT", "OPEN", "NEXT", "CLOSE"}, strings.Fields(lines[0]))
	require.Equal(t, []string{"0", "deny", "0", "12", "*", "*", "*", "2m", "UTC", "web", "-", "-", "false", "true",
		"2026-12-02T12:00:00Z", "2026-12-01T12:02:00Z"}, strings.Fields(lines[1]))
	require.Equal(t, []string{"1", "allow", "0", "22", "*", "*", "*", "1h", "Europe/Berlin", "-", "a,b", "-", "true", "false",
		"2026-12-01T21:00:00Z", "2026-12-01T22:00:00Z"}, strings.Fields(lines[2]))

	out.Reset()
	require.NoError(t, printWindows(&out, p, now, "json"))
	var rows []map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &rows))
	require.Len(t, rows, 2)
	require.Equal(t, true, rows[0]["active"])
	require.Equal(t, "2026-12-01T12:02:00Z", rows[0]["nextClose"])
	require.Equal(t, "Europe/Berlin", rows[1]["timeZone"])

	out.Reset()
	require.NoError(t, printWindows(&out, &app.AppProject{Metadata: app.ObjectMeta{Name: "b"}}, now, ""))
	require.Contains(t, out.String(), "no sync windows")
}
