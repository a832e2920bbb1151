package main

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFlagsHaveFerryServerTwins(t *testing.T) {
	env := map[string]string{"FERRY_SERVER_LISTEN": "127.0.0.1:9443", "FERRY_SERVER_CONTROL_NAMESPACE": "gitops", "FERRY_SERVER_TEMPORAL_ADDRESS": "temporal:7233"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	c, err := parseFlags([]string{"--temporal-address", "other:7233"}, lookup, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:9443", c.listen)
	assert.Equal(t, "gitops", c.controlNamespace)
	assert.Equal(t, "other:7233", c.temporalAddress, "the command line wins")

	_, err = parseFlags([]string{"--tls-cert", "c.pem"}, lookup, io.Discard)
	assert.EqualError(t, err, "give both --tls-cert and --tls-key, or neither (a self-signed certificate)")
	env["FERRY_SERVER_SESSION_TTL"] = "forever"
	_, err = parseFlags(nil, lookup, io.Discard)
	assert.ErrorContains(t, err, `FERRY_SERVER_SESSION_TTL="forever" (the twin of --session-ttl): write a duration`)
}

func TestSelfSignedCertificateFingerprint(t *testing.T) {
	c := &config{listen: "127.0.0.1:8443"}
	cfg, fp, err := c.serverTLS()
	require.NoError(t, err)
	require.Len(t, cfg.Certificates, 1)
	assert.Regexp(t, `^([0-9A-F]{2}:){31}[0-9A-F]{2}$`, fp)
}
