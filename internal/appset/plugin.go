package appset

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/secretmask"
)

// PluginGenerator is Argo CD's plugin generator: the parameter sets an
// HTTP service returns.
type PluginGenerator struct {
	// ConfigMapRef names the ConfigMap of the control namespace giving the
	// service's baseUrl, its token (a reference to a Secret: $key of
	// argocd-secret, or $secret-name:key) and optionally requestTimeout
	// (seconds).
	ConfigMapRef PluginConfigMapRef `json:"configMapRef"`
	Input        PluginInput        `json:"input,omitempty"`
	// Values are added to each parameter set, rendered with it; they are
	// not sent to the service.
	Values map[string]string `json:"values,omitempty"`
	// RequeueAfterSeconds is how often the plugin is asked; default 30 minutes, as in Argo CD.
	RequeueAfterSeconds *int64    `json:"requeueAfterSeconds,omitempty"`
	Template            *Template `json:"template,omitempty"`
}

type PluginConfigMapRef struct {
	Name string `json:"name"`
}

type PluginInput struct {
	// Parameters are sent to the service as they are.
	Parameters map[string]any `json:"parameters,omitempty"`
}

const (
	// pluginPath is where the service answers, under its baseUrl.
	pluginPath = "api/v1/getparams.execute"
	// argoCDSecret holds a token given as $key.
	argoCDSecret = "argocd-secret"
	// pluginTimeout is Argo CD's default request timeout; pluginMaxTimeout
	// bounds the ConfigMap's requestTimeout within the activity's time.
	pluginTimeout    = 30 * time.Second
	pluginMaxTimeout = 5 * time.Minute
	// pluginMaxAnswer bounds the answer read.
	pluginMaxAnswer = 16 << 20
)

// plugin asks the plugin service for the parameter sets, and gives each
// the generator's input as generator.input.parameters, then its values, as
// Argo CD's PluginGenerator does.
func (g *generation) plugin(ctx context.Context, pg *PluginGenerator, p string) ([]Params, error) {
	p += ".plugin"
	ctl, err := g.control("plugin", "ConfigMap "+pg.ConfigMapRef.Name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	svc, err := pluginService(ctx, ctl, pg.ConfigMapRef.Name)
	if err != nil {
		return nil, fmt.Errorf("%s.configMapRef: %w", p, err)
	}
	sets, err := svc.call(ctx, g.set.Metadata.Name, pg.Input.Parameters)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	var out []Params
	for _, set := range sets {
		ps := g.r.objectParams(set)
		ps["generator"] = map[string]any{"input": map[string]any{"parameters": deepCopy(pg.Input.Parameters)}}
		if ps, err = g.r.withValues(ps, pg.Values); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, ps)
	}
	return out, nil
}

// pluginClient is one plugin service, as its ConfigMap describes it.
type pluginClient struct {
	url, token string
	timeout    time.Duration
	// where names the ConfigMap, for errors.
	where string
}

// pluginService reads the ConfigMap and the token's Secret.
func pluginService(ctx context.Context, ctl Control, name string) (*pluginClient, error) {
	cm, err := ctl.ConfigMap(ctx, name)
	if err != nil {
		return nil, err
	}
	where := "ConfigMap " + name
	base, ref := cm["baseUrl"], cm["token"]
	var problems []string
	if base == "" {
		problems = append(problems, "baseUrl is missing: write the plugin service's URL, such as http://my-plugin.argocd.svc:4355")
	}
	if !strings.HasPrefix(ref, "$") {
		problems = append(problems, "token must name a Secret's key: write $key (a key of argocd-secret) or $secret-name:key")
	}
	timeout := pluginTimeout
	if s, ok := cm["requestTimeout"]; ok {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			problems = append(problems, fmt.Sprintf("requestTimeout %q is not a number of seconds", s))
		} else if n > 0 {
			timeout = min(time.Duration(n)*time.Second, pluginMaxTimeout)
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s: %s", where, strings.Join(problems, "; "))
	}
	secret, key := argoCDSecret, ref[1:]
	if s, k, ok := strings.Cut(ref[1:], ":"); ok {
		secret, key = s, k
	}
	data, err := ctl.Secret(ctx, secret)
	if err != nil {
		return nil, fmt.Errorf("%s: token: %w", where, err)
	}
	token, ok := data[key]
	if !ok {
		return nil, fmt.Errorf("%s: token: Secret %s has no key %q: add it, or name another in the ConfigMap's token", where, secret, key)
	}
	return &pluginClient{url: strings.TrimSuffix(base, "/") + "/" + pluginPath, token: strings.TrimSpace(token), timeout: timeout, where: where}, nil
}

// call POSTs the request and reads output.parameters. Its errors say the
// status and the service's message, with the token masked.
func (c *pluginClient) call(ctx context.Context, setName string, params map[string]any) ([]map[string]any, error) {
	body, err := json.Marshal(map[string]any{"applicationSetName": setName, "input": PluginInput{Parameters: params}})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%s: baseUrl: %v", c.where, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("User-Agent", "argocd-applicationset")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, c.mask(fmt.Errorf("POST %s: %v", c.url, err))
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, pluginMaxAnswer+1))
	switch {
	case err != nil:
		return nil, c.mask(fmt.Errorf("POST %s: read the answer: %v", c.url, err))
	case len(answer) > pluginMaxAnswer:
		return nil, fmt.Errorf("POST %s: the answer is larger than %d MiB", c.url, pluginMaxAnswer>>20)
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return nil, c.mask(fmt.Errorf("POST %s: the plugin answered %s: %s", c.url, resp.Status, pluginMessage(answer)))
	}
	var out struct {
		Output struct {
			Parameters []map[string]any `json:"parameters"`
		} `json:"output"`
	}
	if err := json.Unmarshal(answer, &out); err != nil {
		return nil, c.mask(fmt.Errorf("POST %s: the answer is not {\"output\": {\"parameters\": [...]}}: %v: %s", c.url, err, snippet(answer)))
	}
	return out.Output.Parameters, nil
}

// pluginMessage is the message or error field of a JSON answer, else the
// answer's start, as Argo CD reports it.
func pluginMessage(answer []byte) string {
	var raw map[string]any
	if json.Unmarshal(answer, &raw) == nil {
		for _, k := range []string{"message", "error"} {
			if s, ok := raw[k].(string); ok {
				return s
			}
		}
		return ""
	}
	return snippet(answer)
}

func snippet(b []byte) string {
	const n = 200
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// mask hides the token in an error: a service may echo it back.
func (c *pluginClient) mask(err error) error {
	var s secretmask.Set
	s.Add(c.token, c.where+" token")
	return fmt.Errorf("%s", s.Mask(err.Error()))
}

// validatePlugin checks a plugin generator.
func validatePlugin(pg *PluginGenerator, path string) []app.FieldError {
	p := path + ".plugin"
	var errs []app.FieldError
	if pg.ConfigMapRef.Name == "" {
		errs = append(errs, app.FieldError{Field: p + ".configMapRef.name", Message: "required: the ConfigMap of the control namespace giving the plugin's baseUrl and token"})
	}
	return append(errs, validateRequeue(pg.RequeueAfterSeconds, p)...)
}
