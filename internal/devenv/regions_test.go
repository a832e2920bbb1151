package devenv_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ferry-gitops/ferry/internal/devenv"
	"github.com/ferry-gitops/ferry/internal/regions"
)

// The env file names a regions configuration of the stack that a worker
// loads: each region by its API server's URL, as the kubeconfig reaches it,
// with labels, and the first one in-cluster.
func TestRegionsConfig(t *testing.T) {
	require.Equal(t, stack.RegionsConfig, stack.Env()["FERRY_REGIONS_CONFIG"])
	rc, err := regions.Configure(stack.RegionsConfig, stack.Regions, "")
	require.NoError(t, err)
	require.Equal(t, stack.Regions, rc.Names())
	kc, err := clientcmd.LoadFromFile(stack.Kubeconfig)
	require.NoError(t, err)
	for i, name := range stack.Regions {
		server := kc.Clusters[kc.Contexts[name].Cluster].Server
		r, ok := rc.ByServer(server)
		require.True(t, ok, "server %s of context %s maps to no region", server, name)
		require.Equal(t, name, r.Name)
		require.Equal(t, i == 0, r.InCluster, "region %s", name)
		require.Equal(t, map[string]string{devenv.RegionLabel: name, devenv.StackLabel: "dev"}, r.Labels)
	}
	inCluster, ok := rc.ByServer(regions.InClusterServer)
	require.True(t, ok)
	require.Equal(t, stack.Regions[0], inCluster.Name)
}
