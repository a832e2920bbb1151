package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseFlags(t *testing.T) {
	cases := []struct {
		name    string
		env     map[string]string
		args    []string
		regions []string
		wantErr string
	}{
		{name: "env region when no flag", env: map[string]string{"FERRY_REGION": "us-east-1"}, regions: []string{"us-east-1"}},
		{name: "flag overrides env", env: map[string]string{"FERRY_REGION": "us-east-1"}, args: []string{"--region", "eu-west-1", "--kubeconfig", "k"}, regions: []string{"eu-west-1"}},
		{name: "duplicates dropped", args: []string{"--region", "a", "--region", "a,b", "--kubeconfig", "k"}, regions: []string{"a", "b"}},
		{name: "in-cluster serves one region", args: []string{"--region", "a", "--region", "b"}, wantErr: "without a kubeconfig"},
		{name: "context needs kubeconfig", args: []string{"--region", "a", "--context", "x"}, wantErr: "needs --kubeconfig"},
		{name: "nothing to serve", args: []string{}, wantErr: "nothing to serve"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", "")
			t.Setenv("FERRY_REGION", "")
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			cfg, err := parseFlags(tc.args)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.regions, []string(cfg.regions))
		})
	}
}

func TestTLSFlags(t *testing.T) {
	_, err := tlsFlags{cert: "c.pem"}.config("temporal:7233")
	require.ErrorContains(t, err, "give both --temporal-tls-cert and --temporal-tls-key")
	cfg, err := tlsFlags{serverName: ""}.config("temporal:7233")
	require.NoError(t, err)
	require.Nil(t, cfg, "no TLS flag: plain connection")
	cfg, err = tlsFlags{serverName: "ns.tmprl.cloud"}.config("ns.tmprl.cloud:7233")
	require.NoError(t, err)
	require.Equal(t, "ns.tmprl.cloud", cfg.ServerName)
}
