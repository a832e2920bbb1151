package main

import (
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What `go tool pprof http://ADDR/debug/pprof/heap` and `…/profile` read
// from --pprof-addr: a heap profile, and a CPU profile of the seconds
// asked, each a gzipped profile.proto; never the worker's command line.
func TestProfilesServeGoToolPprof(t *testing.T) {
	base := "http://" + serveForTest(t, profileHandlers(), listenerTimeouts) + "/debug/pprof/"
	resp, err := http.Get(base + "cmdline")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "the command line, which may hold --redis-password, is not served")
	for _, p := range []string{"heap", "profile?seconds=1"} {
		resp, err := http.Get(base + p)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", p, body)
		assert.True(t, len(body) > 2 && body[0] == 0x1f && body[1] == 0x8b, "%s is gzipped", p)
	}
}
