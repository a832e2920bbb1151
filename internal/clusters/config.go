package clusters

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
)

// Problem is one field of a cluster Secret that Ferry cannot use.
type Problem struct {
	// Field is the path of the field, such as data.config.tlsClientConfig.caData.
	Field   string
	Message string
}

func (p Problem) String() string { return p.Field + ": " + p.Message }

// Config is the config key of a cluster Secret, as Argo CD writes it.
type Config struct {
	Username    string    `json:"username,omitempty"`
	Password    string    `json:"password,omitempty"`
	BearerToken string    `json:"bearerToken,omitempty"`
	TLS         TLSConfig `json:"tlsClientConfig"`
	Exec        *Exec     `json:"execProviderConfig,omitempty"`
}

// TLSConfig is the config's tlsClientConfig; the data are PEM, base64 in
// the JSON.
type TLSConfig struct {
	Insecure   bool   `json:"insecure,omitempty"`
	ServerName string `json:"serverName,omitempty"`
	CertData   []byte `json:"certData,omitempty"`
	KeyData    []byte `json:"keyData,omitempty"`
	CAData     []byte `json:"caData,omitempty"`
}

// Exec is the config's execProviderConfig: a client-go credential plugin.
type Exec struct {
	Command     string            `json:"command"`
	Args        []string          `json:"args,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
	APIVersion  string            `json:"apiVersion,omitempty"`
	InstallHint string            `json:"installHint,omitempty"`
}

// The fields of Config, and of its tlsClientConfig.
var (
	configFields = []string{"username", "password", "bearerToken", "tlsClientConfig", "execProviderConfig"}
	tlsFields    = []string{"insecure", "serverName", "certData", "keyData", "caData"}
)

// Kubeconfig is a cluster Secret's config (raw, the JSON of its config
// key) as a kubeconfig cluster at server and its user, and the problems of
// the fields Ferry cannot carry, every one at once. The problems never
// quote a value. What the fields say together (a CA that is no PEM, a
// certificate without its key) FromSecret checks besides.
func Kubeconfig(server string, raw []byte) (*clientcmdapi.Cluster, *clientcmdapi.AuthInfo, []Problem) {
	c, problems := parseConfig(raw)
	cluster, auth := c.kubeconfig(server)
	return cluster, auth, problems
}

// parseConfig reads the config key's JSON.
func parseConfig(raw []byte) (Config, []Problem) {
	var c Config
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return c, []Problem{{"data.config", "not a JSON object: write {\"bearerToken\": …, \"tlsClientConfig\": {…}}"}}
	}
	var problems []Problem
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if !slices.Contains(configFields, k) {
			problems = append(problems, Problem{"data.config." + k, unsupported(k)})
		}
	}
	var tls map[string]json.RawMessage
	_ = json.Unmarshal(fields["tlsClientConfig"], &tls)
	for _, k := range slices.Sorted(maps.Keys(tls)) {
		if !slices.Contains(tlsFields, k) {
			problems = append(problems, Problem{"data.config.tlsClientConfig." + k, "Ferry's kubeconfig has no such setting"})
		}
	}
	for _, k := range configFields {
		if v, ok := fields[k]; ok {
			if err := unmarshalField(k, v, &c); err != nil {
				problems = append(problems, Problem{"data.config." + k, err.Error()})
			}
		}
	}
	return c, problems
}

// kubeconfig is c as a kubeconfig cluster at server and its user.
func (c *Config) kubeconfig(server string) (*clientcmdapi.Cluster, *clientcmdapi.AuthInfo) {
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
	return cluster, auth
}

// unmarshalField decodes field k of the config into c. Its error names
// the type wanted (json's type errors and base64's never quote the value).
func unmarshalField(k string, v json.RawMessage, c *Config) error {
	obj, _ := json.Marshal(map[string]json.RawMessage{k: v})
	if err := json.Unmarshal(obj, c); err != nil {
		return fmt.Errorf("%s (byte data are base64 of PEM, as in a kubeconfig's *-data)", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// check finds what the config's fields say wrong together.
func (c *Config) check() []Problem {
	var problems []Problem
	if len(c.TLS.CAData) > 0 {
		if _, err := certutil.ParseCertsPEM(c.TLS.CAData); err != nil {
			problems = append(problems, Problem{"data.config.tlsClientConfig.caData", "holds no PEM certificate (" + err.Error() + "): give the base64 of the CA's PEM, as a kubeconfig's certificate-authority-data"})
		}
		if c.TLS.Insecure {
			problems = append(problems, Problem{"data.config.tlsClientConfig.insecure", "true beside caData: give one of them"})
		}
	}
	if (len(c.TLS.CertData) > 0) != (len(c.TLS.KeyData) > 0) {
		problems = append(problems, Problem{"data.config.tlsClientConfig", "certData and keyData go together: give both, or neither"})
	}
	if c.Username != "" && c.BearerToken != "" {
		problems = append(problems, Problem{"data.config", "username and bearerToken: give one way to log in"})
	}
	if (c.Username != "") != (c.Password != "") {
		problems = append(problems, Problem{"data.config", "username and password go together: give both, or neither"})
	}
	if e := c.Exec; e != nil {
		if e.Command == "" {
			problems = append(problems, Problem{"data.config.execProviderConfig.command", "required: the credential plugin to run"})
		}
		if e.APIVersion == "" {
			problems = append(problems, Problem{"data.config.execProviderConfig.apiVersion", "required: the plugin's API version, such as client.authentication.k8s.io/v1beta1"})
		}
	}
	return problems
}

func unsupported(field string) string {
	switch field {
	case "awsAuthConfig":
		return "AWS IAM authentication is not carried: give the region an execProviderConfig running aws eks get-token instead"
	case "proxyUrl":
		return "a proxy per cluster is not carried: set HTTPS_PROXY for the region's worker instead"
	case "disableCompression":
		return "not carried: leave it out"
	}
	return "Ferry's kubeconfig has no such setting"
}
