package main

import (
	"crypto/tls"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServerSpeaksHTTP2: the listener offers HTTP/2, so that a browser's
// open pages, each holding a stream of changes, share one connection
// instead of using up the six HTTP/1.1 allows a host.
func TestServerSpeaksHTTP2(t *testing.T) {
	cfg := &config{listen: "127.0.0.1:0"}
	tlsCfg, _, err := cfg.serverTLS()
	require.NoError(t, err)
	ln, err := listen(cfg.listen, tlsCfg)
	require.NoError(t, err)
	srv := &http.Server{Handler: (&server{}).routes()}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	c := &http.Client{Transport: &http.Transport{ForceAttemptHTTP2: true, TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := c.Get("https://" + ln.Addr().String() + "/login")
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, 2, resp.ProtoMajor, "the page came over %s", resp.Proto)
}
