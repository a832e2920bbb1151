package argoimport

import (
	"encoding/base64"
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/ferry-gitops/ferry/internal/clusters"
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

// carriedData are the keys of a cluster Secret Ferry reads (shard only
// spreads Argo CD's own controllers, which Ferry's task queues do instead).
var carriedData = []string{"name", "server", "config", "project", "shard"}

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
			Labels: clusters.LabelsOf(s.GetLabels()), Annotations: clusters.AnnotationsOf(s.GetAnnotations())}
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
// user (clusters.Kubeconfig), and the problems of the fields Ferry cannot
// carry.
func kubeconfigOf(obj objectRef, server, raw string) (*clientcmdapi.Cluster, *clientcmdapi.AuthInfo, []Problem) {
	cluster, auth, found := clusters.Kubeconfig(server, []byte(raw))
	problems := make([]Problem, 0, len(found))
	for _, p := range found {
		problems = append(problems, obj.problem(p.Field, p.Message))
	}
	return cluster, auth, problems
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
