package bench

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A failing command's whole output is not quoted in the report: its start
// and its end (where ferry app apply says what failed) are.
func TestClipError(t *testing.T) {
	require.Equal(t, "short", clipError("short"))
	long := "ferry app apply -f DIR: exit status 1: " + strings.Repeat(`application "app-0001" applied `, 20000) +
		"ferry: 1 of 10000 applications failed (app-9269)"
	got := clipError(long)
	require.Less(t, len(got), errorShown+400)
	require.True(t, strings.HasPrefix(got, "ferry app apply -f DIR: exit status 1"))
	require.True(t, strings.HasSuffix(got, "ferry: 1 of 10000 applications failed (app-9269)"))
	require.Contains(t, got, "bytes left out")
}
