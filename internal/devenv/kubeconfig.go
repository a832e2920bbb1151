package devenv

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes a kubeconfig with one context per region, named
// after the region, each with the region's admin token. The first region is
// the current context.
func writeKubeconfig(path string, regions []*region) error {
	cfg := clientcmdapi.NewConfig()
	for _, r := range regions {
		user := "admin@" + r.name
		cfg.Clusters[r.name] = &clientcmdapi.Cluster{Server: r.server, CertificateAuthorityData: r.pki.caPEM}
		cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: r.pki.adminToken}
		cfg.Contexts[r.name] = &clientcmdapi.Context{Cluster: r.name, AuthInfo: user, Namespace: "default"}
		if cfg.CurrentContext == "" {
			cfg.CurrentContext = r.name
		}
	}
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return nil
}

// restConfig is the admin client config of one region.
func (r *region) restConfig() *rest.Config {
	return &rest.Config{
		Host:            r.server,
		BearerToken:     r.pki.adminToken,
		TLSClientConfig: rest.TLSClientConfig{CAData: r.pki.caPEM},
		QPS:             100,
		Burst:           200,
	}
}
