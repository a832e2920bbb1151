package devenv

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"text/template"
)

// clusterHistoryShards is numHistoryShards: more than one, so that workflows
// spread over shards as on a production cluster (it cannot change later).
const clusterHistoryShards = 4

// clusterServices are the Temporal services, one process each.
var clusterServices = []string{"frontend", "history", "matching", "worker"}

// clusterConfig is the server's static config: the persistence of both
// stores, and per service its gRPC and membership ports on loopback.
var clusterConfig = template.Must(template.New("development.yaml").Parse(`# Written by ferry dev up --temporal cluster: every service reads this file.
log:
  stdout: true
  level: warn
  format: console
persistence:
  defaultStore: default
  visibilityStore: visibility
  numHistoryShards: {{.Shards}}
  datastores:
{{- range $name, $db := .Databases}}
    {{$name}}:
      sql:
        pluginName: postgres12
        databaseName: {{$db}}
        connectAddr: "{{$.Postgres}}"
        connectProtocol: tcp
        user: {{$.User}}
        password: "{{$.Password}}"
        maxConns: 10
        maxIdleConns: 10
        maxConnLifetime: 1h
{{- end}}
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
services:
{{- range .Services}}
  {{.Name}}:
    rpc:
      grpcPort: {{.GRPCPort}}
      membershipPort: {{.MembershipPort}}
      bindOnIP: 127.0.0.1
{{- end}}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: "{{.Frontend}}"
dcRedirectionPolicy:
  policy: noop
dynamicConfigClient:
  filepath: "{{.DynamicConfig}}"
  pollInterval: 10s
`))

// clusterDynamicConfig changes the defaults only where the tests and a
// developer's UI need it: visibility queries (lists, the Web UI, `ferry app
// list`) get the dev server's per-instance limit instead of 10 a second;
// and where Ferry needs it: the matcher that serves a backlog by priority
// (workflows/priority.go), the default from Temporal 1.30 on.
const clusterDynamicConfig = `frontend.namespaceRPS.visibility:
  - value: 100
matching.useNewMatcher:
  - value: true
`

// clusterUIConfig points the Web UI server at the frontend.
var clusterUIConfig = template.Must(template.New("development.yaml").Parse(`temporalGrpcAddress: "{{.Frontend}}"
host: 127.0.0.1
port: {{.Port}}
enableUi: true
defaultNamespace: {{.Namespace}}
refreshInterval: 1m
notifyOnNewVersion: false
cors:
  cookieInsecure: true
  unsafeAllowAllOrigins: false
`))

type clusterServicePorts struct {
	Name                     string
	GRPCPort, MembershipPort int
}

// writeConfig writes the server's config dir and the UI server's.
func (c *temporalCluster) writeConfig() error {
	if err := os.MkdirAll(c.configDir(), 0o700); err != nil {
		return fmt.Errorf("temporal cluster config: %w", err)
	}
	if err := os.MkdirAll(c.uiConfigDir(), 0o700); err != nil {
		return fmt.Errorf("temporal cluster config: %w", err)
	}
	dynamic := filepath.Join(c.configDir(), "dynamicconfig.yaml")
	if err := os.WriteFile(dynamic, []byte(clusterDynamicConfig), 0o600); err != nil {
		return fmt.Errorf("temporal cluster config: %w", err)
	}
	var services []clusterServicePorts
	for i, name := range clusterServices {
		services = append(services, clusterServicePorts{Name: name, GRPCPort: c.servicePorts[2*i], MembershipPort: c.servicePorts[2*i+1]})
	}
	var server, ui bytes.Buffer
	if err := clusterConfig.Execute(&server, map[string]any{
		"Shards":        clusterHistoryShards,
		"Databases":     map[string]string{"default": clusterDatabases[0], "visibility": clusterDatabases[1]},
		"Postgres":      c.pg.address(),
		"User":          postgresUser,
		"Password":      c.pg.password,
		"Services":      services,
		"Frontend":      c.address(),
		"DynamicConfig": dynamic,
	}); err != nil {
		return err
	}
	if err := clusterUIConfig.Execute(&ui, map[string]any{"Frontend": c.address(), "Port": c.uiPort, "Namespace": c.namespace}); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(c.configDir(), "development.yaml"), server.Bytes(), 0o600); err != nil {
		return fmt.Errorf("temporal cluster config: %w", err)
	}
	if err := os.WriteFile(filepath.Join(c.uiConfigDir(), "development.yaml"), ui.Bytes(), 0o600); err != nil {
		return fmt.Errorf("temporal cluster config: %w", err)
	}
	return nil
}
