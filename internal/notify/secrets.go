package notify

import (
	"fmt"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// EnvPrefix begins the environment variables holding secrets:
// $slack-token is FERRY_NOTIFY_SLACK_TOKEN.
const EnvPrefix = "FERRY_NOTIFY_"

// Secrets are where $secret references are read: the environment first,
// then Argo CD's argocd-notifications-secret, as a manifest file read
// afresh at each lookup or as the Secret the worker watches in its control
// cluster, so that a rotated secret is used at once.
type Secrets struct {
	// File is a Secret manifest (data base64, or stringData); empty: none.
	File string
	// Watched is the Secret watched in the control cluster (nil: none).
	Watched *WatchedSecret
	// Env reads the environment (os.LookupEnv when nil).
	Env func(string) (string, bool)
}

// EnvName is the environment variable of a secret key.
func EnvName(key string) string {
	return EnvPrefix + strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, key)
}

func (s *Secrets) lookup(key string) (string, bool) {
	if s == nil {
		return "", false
	}
	env := s.Env
	if env == nil {
		env = os.LookupEnv
	}
	if v, ok := env(EnvName(key)); ok {
		return v, true
	}
	if s.Watched != nil {
		return s.Watched.lookup(key)
	}
	data, err := s.fileData()
	if err != nil {
		return "", false
	}
	v, ok := data[key]
	return v, ok
}

// fileData reads the Secret file's keys.
func (s *Secrets) fileData() (map[string]string, error) {
	if s.File == "" {
		return nil, nil
	}
	raw, err := os.ReadFile(s.File)
	if err != nil {
		return nil, err
	}
	var sec corev1.Secret
	if err := yaml.Unmarshal(raw, &sec); err != nil {
		return nil, fmt.Errorf("notifications secret %s: not a Secret manifest: %w", s.File, err)
	}
	out := map[string]string{}
	for k, v := range sec.Data {
		out[k] = string(v)
	}
	for k, v := range sec.StringData {
		out[k] = v
	}
	return out, nil
}

// Check reports whether the Secret file can be read.
func (s *Secrets) Check() error {
	if s == nil || s.File == "" {
		return nil
	}
	_, err := s.fileData()
	return err
}

// where says where the missing references were looked for.
func (s *Secrets) where(refs []string) string {
	var env []string
	for _, r := range refs {
		env = append(env, EnvName(r[1:]))
	}
	msg := "set " + strings.Join(env, ", ") + " in the worker's environment"
	switch {
	case s != nil && s.Watched != nil:
		msg += " or add the keys to " + s.Watched.Name
	case s != nil && s.File != "":
		msg += " or add the keys to " + s.File
	default:
		msg += " or give a Secret file with --notifications-secret"
	}
	return msg
}
