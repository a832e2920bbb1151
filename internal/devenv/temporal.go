package devenv

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

const temporalTimeout = 90 * time.Second

// SearchAttributes are Ferry's search attributes and their types, registered
// when the dev server starts.
var SearchAttributes = map[string]string{
	"FerryApp":          "Keyword",
	"FerryRepoURL":      "Keyword",
	"FerrySyncStatus":   "Keyword",
	"FerryHealthStatus": "Keyword",
	"FerryRevision":     "Keyword",
	"FerryRegions":      "KeywordList",
	"FerryProject":      "Keyword",
	"FerryOperation":    "Keyword",
	"FerryRepoURLs":     "KeywordList",
	"FerryAppNamespace": "Keyword",
}

// devServerTuning makes the dev server as cheap per workflow task as the
// server's own settings for a SQLite file are, without giving up anything a
// production deployment keeps (bench/README.md has the figures):
//   - journal_mode=wal with synchronous=2 (FULL), the pragmas of Temporal's
//     own config/development-sqlite-file.yaml: every commit is still synced
//     to disk before it is answered, but as one append and one fsync of the
//     write-ahead log, where the default rollback journal creates, syncs and
//     deletes a journal file and syncs the database on every commit (a fifth
//     of the server's CPU samples on a fleet's idle polls).
//   - system.forceSearchAttributesCacheRefreshOnRead=false, the server's
//     default, which the CLI turns on so that a search attribute added while
//     it runs is seen at once, at the price of a read of the cluster
//     metadata from SQLite on every use of the search attributes: Ferry
//     registers its own when the server starts (--search-attribute).
//   - matching.useNewMatcher=true: the matcher that serves a backlog by
//     priority (Ferry's activities carry one, workflows/priority.go; the
//     default from Temporal 1.30 on), with one partition per task queue,
//     so that the order holds for the whole queue, not per partition: a
//     single server process gains nothing from more.
var devServerTuning = []string{
	"--sqlite-pragma", "journal_mode=wal",
	"--sqlite-pragma", "synchronous=2",
	"--dynamic-config-value", "system.forceSearchAttributesCacheRefreshOnRead=false",
	"--dynamic-config-value", "matching.useNewMatcher=true",
	"--dynamic-config-value", "matching.numTaskqueueReadPartitions=1",
	"--dynamic-config-value", "matching.numTaskqueueWritePartitions=1",
}

// temporalServer is the Temporal dev server with its Web UI, on a SQLite file
// so that a restart keeps every workflow.
type temporalServer struct {
	bin, dbFile, logDir, dir string
	env                      []string
	namespace                string
	port, uiPort, httpPort   int
	metricsPort              int
	p                        *proc
}

const temporalPortCount = 4

func newTemporalServer(toolsBin, stateDir string, env []string, ports []int) *temporalServer {
	return &temporalServer{
		bin:       filepath.Join(toolsBin, "temporal"),
		dbFile:    filepath.Join(stateDir, "temporal.db"),
		logDir:    filepath.Join(stateDir, "logs"),
		dir:       stateDir,
		env:       env,
		namespace: "default",
		port:      ports[0], uiPort: ports[1], httpPort: ports[2], metricsPort: ports[3],
	}
}

func (t *temporalServer) address() string { return hostPort(t.port) }
func (t *temporalServer) uiURL() string   { return "http://" + hostPort(t.uiPort) }

// start starts the dev server and waits until the frontend is serving, the
// namespace exists with Ferry's search attributes, and the Web UI answers.
func (t *temporalServer) start(ctx context.Context) error {
	args := []string{"server", "start-dev",
		"--db-filename", t.dbFile,
		"--ip", "127.0.0.1",
		"--port", strconv.Itoa(t.port),
		"--ui-port", strconv.Itoa(t.uiPort),
		"--http-port", strconv.Itoa(t.httpPort),
		"--metrics-port", strconv.Itoa(t.metricsPort),
		"--headless=false",
		"--log-level", "warn",
		"--log-format", "text",
	}
	args = append(args, devServerTuning...)
	for _, name := range sortedKeys(SearchAttributes) {
		args = append(args, "--search-attribute", name+"="+SearchAttributes[name])
	}
	p, err := startProc("temporal", t.logDir, t.dir, t.env, t.bin, args...)
	if err != nil {
		return err
	}
	t.p = p
	conn, err := grpc.NewClient(t.address(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("temporal: dial %s: %w", t.address(), err)
	}
	defer conn.Close()
	health := healthpb.NewHealthClient(conn)
	workflows := workflowservice.NewWorkflowServiceClient(conn)
	operator := operatorservice.NewOperatorServiceClient(conn)
	httpc := &http.Client{Timeout: 2 * time.Second}
	return p.waitReady(ctx, "Temporal dev server", temporalTimeout, func(ctx context.Context) error {
		resp, err := health.Check(ctx, &healthpb.HealthCheckRequest{Service: workflowservice.WorkflowService_ServiceDesc.ServiceName})
		if err != nil {
			return err
		}
		if resp.Status != healthpb.HealthCheckResponse_SERVING {
			return fmt.Errorf("frontend health: %s", resp.Status)
		}
		if _, err := workflows.DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: t.namespace}); err != nil {
			return fmt.Errorf("describe namespace %s: %w", t.namespace, err)
		}
		sa, err := operator.ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: t.namespace})
		if err != nil {
			return fmt.Errorf("list search attributes: %w", err)
		}
		for name := range SearchAttributes {
			if _, ok := sa.CustomAttributes[name]; !ok {
				return fmt.Errorf("search attribute %s is not registered yet", name)
			}
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, t.uiURL(), nil)
		ui, err := httpc.Do(req)
		if err != nil {
			return fmt.Errorf("web UI: %w", err)
		}
		ui.Body.Close()
		if ui.StatusCode != http.StatusOK {
			return fmt.Errorf("web UI %s: %s", t.uiURL(), ui.Status)
		}
		return nil
	})
}

func (t *temporalServer) procs() []*proc { return []*proc{t.p} }

func (t *temporalServer) stop() error {
	if t.p == nil {
		return nil
	}
	return t.p.stop(stopGrace)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
