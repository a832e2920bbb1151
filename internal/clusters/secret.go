package clusters

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/ferry-gitops/ferry/internal/regions"
)

const (
	// SecretTypeLabel and SecretTypeCluster mark Argo CD's cluster Secrets.
	SecretTypeLabel   = "argocd.argoproj.io/secret-type"
	SecretTypeCluster = "cluster"
	// lastApplied is kubectl's annotation, which is no annotation of the
	// cluster's (Argo CD leaves it out too).
	lastApplied = "kubectl.kubernetes.io/last-applied-configuration"
)

// The keys of a cluster Secret that Ferry reads; shard only spreads Argo
// CD's own controllers, which Ferry's task queues do instead.
var secretKeys = []string{"name", "server", "config", "project", "shard"}

// Cluster is one cluster Secret as a region.
type Cluster struct {
	// Secret is the Secret's namespace/name.
	Secret string
	// Region is the region: name, server, project, and the Secret's labels
	// (but the secret-type label) and annotations. It holds no credential.
	Region regions.Region
	// Config is how to connect to the region's API server; nil when Err.
	Config *rest.Config
	// Err is why the region cannot be connected to: the problems of the
	// Secret's config, every one, each naming the Secret and the field.
	Err error
	// Digest changes when what the region connects with does (server,
	// config): its workers start again with the new settings.
	Digest string
}

// FromSecret is the cluster of a cluster Secret. A Secret whose region is
// known (name, server) but whose connection settings are not usable is
// still a cluster, with Err saying why: its region shows Unreachable with
// that reason, as Argo CD shows a cluster it cannot connect to.
func FromSecret(s *corev1.Secret) Cluster {
	key := s.Namespace + "/" + s.Name
	data := func(k string) string { return strings.TrimSpace(string(s.Data[k])) }
	c := Cluster{Secret: key, Region: regions.Region{
		Name: data("name"), Server: data("server"), Project: data("project"),
		Labels: LabelsOf(s.Labels), Annotations: AnnotationsOf(s.Annotations),
	}}
	sum := sha256.Sum256([]byte(data("server") + "\x00" + string(s.Data["config"])))
	c.Digest = hex.EncodeToString(sum[:8])
	var problems []Problem
	for _, k := range slices.Sorted(maps.Keys(s.Data)) {
		if !slices.Contains(secretKeys, k) {
			problems = append(problems, Problem{"data." + k, fmt.Sprintf("no such key of a cluster Secret: write one of %s", strings.Join(secretKeys, ", "))})
		}
	}
	var config Config
	if len(s.Data["config"]) == 0 {
		problems = append(problems, Problem{"data.config", `required: how to connect, such as {"bearerToken": …, "tlsClientConfig": {"caData": …}}`})
	} else {
		var cp []Problem
		config, cp = parseConfig(s.Data["config"])
		problems = append(append(problems, cp...), config.check()...)
	}
	if len(problems) == 0 {
		cluster, auth := config.kubeconfig(c.Region.Server)
		c.Config, c.Err = restConfig(cluster, auth)
		if c.Err != nil {
			c.Err = fmt.Errorf("cluster Secret %s: data.config: %w", key, c.Err)
		}
		return c
	}
	msgs := make([]string, len(problems))
	for i, p := range problems {
		msgs[i] = p.String()
	}
	c.Err = fmt.Errorf("cluster Secret %s: %s", key, strings.Join(msgs, "; "))
	return c
}

// restConfig is the rest.Config of a kubeconfig cluster and user, as
// client-go builds it (TLS, exec credential plugins, its checks).
func restConfig(cluster *clientcmdapi.Cluster, auth *clientcmdapi.AuthInfo) (*rest.Config, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"], kc.AuthInfos["c"] = cluster, auth
	kc.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "c"}
	kc.CurrentContext = "c"
	rc, err := clientcmd.NewNonInteractiveClientConfig(*kc, "c", &clientcmd.ConfigOverrides{}, nil).ClientConfig()
	if err != nil {
		// clientcmd names its own context "c": what matters is the rest.
		return nil, errors.New(strings.ReplaceAll(err.Error(), `context "c"`, "the config"))
	}
	rc.QPS, rc.Burst, rc.UserAgent = 1000, 2000, "ferry"
	return rc, nil
}

// NewSecret is the cluster Secret of name in namespace for the cluster at
// server: Argo CD's, labelled as one, with the cluster's labels and
// annotations, config the JSON of its connection settings.
func NewSecret(namespace, secretName string, r regions.Region, config Config) (*corev1.Secret, error) {
	raw, err := json.Marshal(config)
	if err != nil {
		return nil, err
	}
	labels := maps.Clone(r.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[SecretTypeLabel] = SecretTypeCluster
	s := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: namespace, Labels: labels, Annotations: maps.Clone(r.Annotations)},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{"name": []byte(r.Name), "server": []byte(r.Server), "config": raw},
	}
	if r.Project != "" {
		s.Data["project"] = []byte(r.Project)
	}
	return s, nil
}

// SecretName is the name argocd cluster add gives a cluster's Secret:
// cluster-<host of the server>-<a hash of the server>.
func SecretName(server string) string {
	host := server
	if i := strings.Index(host, "://"); i >= 0 {
		host = host[i+3:]
	}
	host = strings.Split(strings.Split(host, "/")[0], ":")[0]
	sum := sha256.Sum256([]byte(server))
	var b strings.Builder
	for _, r := range strings.ToLower(host) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			b.WriteRune(r)
		} else {
			b.WriteRune('-')
		}
	}
	return fmt.Sprintf("cluster-%s-%s", strings.Trim(b.String(), "-."), hex.EncodeToString(sum[:4]))
}

// LabelsOf are the cluster's labels of its Secret's: all but the
// secret-type label, as Argo CD's clusters generator sees them.
func LabelsOf(secretLabels map[string]string) map[string]string {
	return without(secretLabels, SecretTypeLabel)
}

// AnnotationsOf are the cluster's annotations of its Secret's: all but
// kubectl's last-applied-configuration.
func AnnotationsOf(secretAnnotations map[string]string) map[string]string {
	return without(secretAnnotations, lastApplied)
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
