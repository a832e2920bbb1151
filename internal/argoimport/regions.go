package argoimport

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/ferry-gitops/ferry/internal/regions"
)

// inClusterServer is Argo CD's in-cluster destination.
const inClusterServer = "https://kubernetes.default.svc"

// Regions are the cluster Secrets as Ferry's regions configuration and the
// kubeconfig its region workers connect with (a context per region).
type Regions struct {
	File       regions.File
	Kubeconfig *clientcmdapi.Config
}

// clusterConfig is the config key of a cluster Secret: what Ferry carries
// of it. Any other field is a Problem.
type clusterConfig struct {
	Username    string `json:"username"`
	Password    string `json:"password"`
	BearerToken string `json:"bearerToken"`
	TLS         struct {
		Insecure   bool   `json:"insecure"`
		ServerName string `json:"serverName"`
		CertData   []byte `json:"certData"`
		KeyData    []byte `json:"keyData"`
		CAData     []byte `json:"caData"`
	} `json:"tlsClientConfig"`
	Exec *struct {
		Command     string            `json:"command"`
		Args        []string          `json:"args"`
		Env         map[string]string `json:"env"`
		APIVersion  string            `json:"apiVersion"`
		InstallHint string            `json:"installHint"`
	} `json:"execProviderConfig"`
}

// carriedConfig are the fields of clusterConfig; carriedData the keys of
// a cluster Secret Ferry reads (shard only spreads Argo CD's own
// controllers, which Ferry's task queues do instead).
var (
	carriedConfig = []string{"username", "password", "bearerToken", "tlsClientConfig", "execProviderConfig"}
	carriedTLS    = []string{"insecure", "serverName", "certData", "keyData", "caData"}
	carriedData   = []string{"name", "server", "config", "project", "shard"}
)

// planRegions turns the cluster Secrets into regions. The cluster Argo CD
// runs in (home, the API server of in.Server) is the in-cluster region:
// the Secret naming it, or else a region named in-cluster with home's
// credentials.
func planRegions(in *Installation, home *rest.Config) (*Regions, []Problem) {
	out := &Regions{Kubeconfig: clientcmdapi.NewConfig()}
	var problems []Problem
	haveHome := false
	for _, s := range in.Clusters {
		obj := object("Secret", s)
		data, err := secretData(&s)
		if err != nil {
			problems = append(problems, obj.problem("data", err.Error()))
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(data)) {
			if !slices.Contains(carriedData, k) {
				problems = append(problems, obj.problem("data."+k, "Ferry's regions have no such setting: remove it, or leave this cluster out"))
			}
		}
		r := regions.Region{Name: data["name"], Server: data["server"], Project: data["project"],
			Labels: without(s.GetLabels(), secretTypeLabel), Annotations: without(s.GetAnnotations(), "kubectl.kubernetes.io/last-applied-configuration")}
		if r.Server == inClusterServer || r.Server == in.Server {
			r.Server, r.InCluster, haveHome = in.Server, true, true
		}
		cluster, auth, cp := kubeconfigOf(obj, r.Server, data["config"])
		problems = append(problems, cp...)
		out.File.Regions = append(out.File.Regions, r)
		out.addContext(r.Name, cluster, auth)
	}
	if !haveHome && home != nil {
		r := regions.Region{Name: "in-cluster", Server: in.Server, InCluster: true}
		out.File.Regions = append(out.File.Regions, r)
		out.addContext(r.Name, &clientcmdapi.Cluster{Server: home.Host, CertificateAuthorityData: home.CAData, InsecureSkipTLSVerify: home.Insecure},
			&clientcmdapi.AuthInfo{Token: home.BearerToken, ClientCertificateData: home.CertData, ClientKeyData: home.KeyData,
				Username: home.Username, Password: home.Password, Exec: home.ExecProvider})
	}
	if _, err := regions.New(out.File.Regions); err != nil {
		problems = append(problems, Problem{Object: "cluster Secrets", Field: "name, server", Message: err.Error()})
	}
	return out, problems
}

func (r *Regions) addContext(name string, cluster *clientcmdapi.Cluster, auth *clientcmdapi.AuthInfo) {
	r.Kubeconfig.Clusters[name] = cluster
	r.Kubeconfig.AuthInfos[name] = auth
	r.Kubeconfig.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
}

// kubeconfigOf is a cluster Secret's config as a kubeconfig cluster and
// user, and the problems of the fields Ferry cannot carry.
func kubeconfigOf(obj objectRef, server, raw string) (*clientcmdapi.Cluster, *clientcmdapi.AuthInfo, []Problem) {
	var problems []Problem
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &fields); err != nil {
		return &clientcmdapi.Cluster{Server: server}, &clientcmdapi.AuthInfo{}, []Problem{obj.problem("data.config", "not JSON: "+err.Error())}
	}
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if !slices.Contains(carriedConfig, k) {
			problems = append(problems, obj.problem("data.config."+k, unsupportedConfig(k)))
		}
	}
	var tls map[string]json.RawMessage
	_ = json.Unmarshal(fields["tlsClientConfig"], &tls)
	for _, k := range slices.Sorted(maps.Keys(tls)) {
		if !slices.Contains(carriedTLS, k) {
			problems = append(problems, obj.problem("data.config.tlsClientConfig."+k, "Ferry's kubeconfig has no such setting"))
		}
	}
	var c clusterConfig
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		problems = append(problems, obj.problem("data.config", err.Error()))
	}
	cluster := &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: c.TLS.CAData, InsecureSkipTLSVerify: c.TLS.Insecure, TLSServerName: c.TLS.ServerName}
	auth := &clientcmdapi.AuthInfo{Token: c.BearerToken, Username: c.Username, Password: c.Password,
		ClientCertificateData: c.TLS.CertData, ClientKeyData: c.TLS.KeyData}
	if e := c.Exec; e != nil {
		auth.Exec = &clientcmdapi.ExecConfig{Command: e.Command, Args: e.Args, APIVersion: e.APIVersion, InstallHint: e.InstallHint,
			InteractiveMode: clientcmdapi.NeverExecInteractiveMode}
		for _, k := range slices.Sorted(maps.Keys(e.Env)) {
			auth.Exec.Env = append(auth.Exec.Env, clientcmdapi.ExecEnvVar{Name: k, Value: e.Env[k]})
		}
	}
	return cluster, auth, problems
}

func unsupportedConfig(field string) string {
	switch field {
	case "awsAuthConfig":
		return "AWS IAM authentication is not carried: give the region an execProviderConfig running aws eks get-token instead"
	case "proxyUrl":
		return "a proxy per cluster is not carried: set HTTPS_PROXY for the region's worker instead"
	}
	return "Ferry's kubeconfig has no such setting"
}

// secretData is a Secret's data, decoded.
func secretData(s *unstructured.Unstructured) (map[string]string, error) {
	raw, _, err := unstructured.NestedStringMap(s.Object, "data")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for k, v := range raw {
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return nil, fmt.Errorf("key %s is not base64", k)
		}
		out[k] = string(b)
	}
	return out, nil
}

func without(m map[string]string, keys ...string) map[string]string {
	out := maps.Clone(m)
	for _, k := range keys {
		delete(out, k)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
