package devenv

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// clusterTimeout bounds the start of the services once PostgreSQL and the
// schema are ready: they join their membership ring and take the shards.
const clusterTimeout = 3 * time.Minute

// clusterDatabases are the main store and the visibility store, each set up
// from its own schema dir of the server module (tools cache: temporal-schema/).
var clusterDatabases = [2]string{"temporal", "temporal_visibility"}

var clusterSchemaDirs = [2]string{"temporal", "visibility"}

// clusterPortCount: PostgreSQL, gRPC and membership per service, the UI.
const clusterPortCount = 1 + 2*4 + 1

// temporalCluster is a Temporal cluster as a production deployment runs
// one, on one machine: the server built from go.temporal.io/server, its
// frontend, history, matching and worker services as separate processes on
// their own ports, PostgreSQL for both stores, and the Web UI server.
type temporalCluster struct {
	toolsBin, dir, logDir string // dir: DIR/temporal, the services' working dir
	env                   []string
	namespace             string
	servicePorts          []int // gRPC, membership per clusterServices entry
	uiPort                int
	pg                    *postgres
	schemaReady           bool
	services              []*proc // in clusterServices order
	ui                    *proc
	logf                  func(format string, args ...any)
}

func newTemporalCluster(toolsBin, stateDir string, env []string, ports []int, logf func(string, ...any)) (*temporalCluster, error) {
	binDir, err := postgresBinDir()
	if err != nil {
		return nil, err
	}
	for _, tool := range []string{"temporal-server", "temporal-sql-tool", "temporal-ui-server", "temporal-schema"} {
		if _, err := os.Stat(filepath.Join(toolsBin, tool)); err != nil {
			return nil, fmt.Errorf("tools bin dir %s lacks %s, which --temporal cluster needs: run hack/tools.sh", toolsBin, tool)
		}
	}
	logDir := filepath.Join(stateDir, "logs")
	return &temporalCluster{
		toolsBin:     toolsBin,
		dir:          filepath.Join(stateDir, "temporal"),
		logDir:       logDir,
		env:          env,
		namespace:    "default",
		logf:         logf,
		servicePorts: ports[1 : 1+2*len(clusterServices)],
		uiPort:       ports[1+2*len(clusterServices)],
		pg: &postgres{
			binDir:   binDir,
			dataDir:  filepath.Join(stateDir, "postgres", "data"),
			logDir:   logDir,
			env:      env,
			port:     ports[0],
			password: rand.Text(),
		},
	}, nil
}

func (c *temporalCluster) address() string     { return hostPort(c.servicePorts[0]) }
func (c *temporalCluster) uiURL() string       { return "http://" + hostPort(c.uiPort) }
func (c *temporalCluster) configDir() string   { return filepath.Join(c.dir, "config") }
func (c *temporalCluster) uiConfigDir() string { return filepath.Join(c.dir, "ui", "config") }

func (c *temporalCluster) procs() []*proc {
	return append([]*proc{c.pg.p, c.ui}, c.services...)
}

// start runs PostgreSQL, sets up both schemas once, starts the services and
// the UI, and waits until the frontend serves the namespace with Ferry's
// search attributes, a workflow can be started on it, and the UI answers.
func (c *temporalCluster) start(ctx context.Context) error {
	began := time.Now()
	if err := c.pg.start(ctx); err != nil {
		return err
	}
	pgReady := time.Since(began)
	if !c.schemaReady {
		if err := c.setupSchema(ctx); err != nil {
			return err
		}
		c.schemaReady = true
	}
	schemaReady := time.Since(began)
	if err := c.writeConfig(); err != nil {
		return err
	}
	// Every service writes the cluster's metadata on its first start, and
	// two at once fail: the frontend goes first, the others once it answers.
	c.services = nil
	for i, name := range clusterServices {
		p, err := startProc("temporal-"+name, c.logDir, c.dir, c.env, filepath.Join(c.toolsBin, "temporal-server"),
			"--config", "config", "--env", "development", "--allow-no-auth", "start", "--service", name)
		if err != nil {
			return fmt.Errorf("temporal cluster: %w", err)
		}
		c.services = append(c.services, p)
		if i == 0 {
			if err := c.waitFrontendUp(ctx); err != nil {
				return err
			}
		}
	}
	ui, err := startProc("temporal-ui", c.logDir, filepath.Dir(c.uiConfigDir()), c.env, filepath.Join(c.toolsBin, "temporal-ui-server"),
		"--config", "config", "--env", "development", "start")
	if err != nil {
		return fmt.Errorf("temporal cluster: %w", err)
	}
	c.ui = ui
	if err := c.waitServing(ctx); err != nil {
		return err
	}
	c.logf("temporal cluster: PostgreSQL ready after %s, schema after %s, services serving after %s",
		pgReady.Round(10*time.Millisecond), schemaReady.Round(10*time.Millisecond), since(began))
	return nil
}

// waitFrontendUp waits until the frontend answers a health check, whatever
// it says: it has then stored the cluster's metadata.
func (c *temporalCluster) waitFrontendUp(ctx context.Context) error {
	conn, err := grpc.NewClient(c.address(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("temporal cluster: dial %s: %w", c.address(), err)
	}
	defer conn.Close()
	health := healthpb.NewHealthClient(conn)
	return c.services[0].waitReady(ctx, "Temporal frontend", clusterTimeout, func(ctx context.Context) error {
		_, err := health.Check(ctx, &healthpb.HealthCheckRequest{Service: workflowservice.WorkflowService_ServiceDesc.ServiceName})
		return err
	})
}

// setupSchema creates both databases and brings each to the newest schema
// version of its versioned dir, with the server's own SQL tool.
func (c *temporalCluster) setupSchema(ctx context.Context) error {
	logPath := filepath.Join(c.logDir, "temporal-sql-tool.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("temporal schema: %w", err)
	}
	defer logFile.Close()
	env := append(append([]string(nil), c.env...), "SQL_PASSWORD="+c.pg.password)
	for i, db := range clusterDatabases {
		schemaDir := filepath.Join(c.toolsBin, "temporal-schema", "postgresql", "v12", clusterSchemaDirs[i], "versioned")
		for _, step := range [][]string{
			{"create-database"},
			{"setup-schema", "--version", "0.0"},
			{"update-schema", "--schema-dir", schemaDir},
		} {
			args := append([]string{"--plugin", "postgres12", "--endpoint", "127.0.0.1", "--port", strconv.Itoa(c.pg.port),
				"--user", postgresUser, "--database", db}, step...)
			fmt.Fprintf(logFile, "=== %s temporal-sql-tool %q\n", time.Now().Format(time.RFC3339), args)
			cmd := exec.CommandContext(ctx, filepath.Join(c.toolsBin, "temporal-sql-tool"), args...)
			cmd.Env = env
			cmd.Stdout, cmd.Stderr = logFile, logFile
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("temporal schema: temporal-sql-tool %s on database %s failed (%v): see %s, which ends:\n%s",
					step[0], db, err, logPath, lastLines(logPath, 5))
			}
		}
	}
	return nil
}

// waitServing registers the namespace and the search attributes through
// the frontend, as an operator does, and returns once a workflow that sets
// them all can be started: the frontend, history (shards owned) and matching
// are serving, and the frontend maps Ferry's attributes.
func (c *temporalCluster) waitServing(ctx context.Context) error {
	conn, err := grpc.NewClient(c.address(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("temporal cluster: dial %s: %w", c.address(), err)
	}
	defer conn.Close()
	health := healthpb.NewHealthClient(conn)
	workflows := workflowservice.NewWorkflowServiceClient(conn)
	operator := operatorservice.NewOperatorServiceClient(conn)
	httpc := &http.Client{Timeout: 2 * time.Second}
	frontend := c.services[0]
	var registered, probed bool
	// What it waits for goes to the log when it changes, at most every few
	// seconds: on a loaded machine the start can take a minute.
	var last string
	var logged time.Time
	return frontend.waitReady(ctx, "Temporal cluster", clusterTimeout, func(ctx context.Context) (err error) {
		defer func() {
			if err != nil && err.Error() != last && time.Since(logged) > 3*time.Second {
				last, logged = err.Error(), time.Now()
				c.logf("temporal cluster: waiting: %v", err)
			}
		}()
		for _, p := range c.procs() {
			if p == nil {
				continue
			}
			if done, err := p.exited(); done {
				return stopWaiting(fmt.Errorf("%s exited before the cluster was ready (%v): see %s, which ends:\n%s", p.name, err, p.logPath, lastLines(p.logPath, 5)))
			}
		}
		resp, err := health.Check(ctx, &healthpb.HealthCheckRequest{Service: workflowservice.WorkflowService_ServiceDesc.ServiceName})
		if err != nil {
			return err
		}
		if resp.Status != healthpb.HealthCheckResponse_SERVING {
			return fmt.Errorf("frontend health: %s", resp.Status)
		}
		if !registered {
			if _, err := workflows.RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
				Namespace:                        c.namespace,
				WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour),
			}); err != nil && !isAPIError[*serviceerror.NamespaceAlreadyExists](err) {
				return fmt.Errorf("register namespace %s: %w", c.namespace, err)
			}
			registered = true
		}
		if err := c.addSearchAttributes(ctx, operator); err != nil {
			return err
		}
		if !probed {
			if err := c.probe(ctx, workflows); err != nil {
				return err
			}
			probed = true
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.uiURL(), nil)
		ui, err := httpc.Do(req)
		if err != nil {
			return fmt.Errorf("web UI: %w", err)
		}
		ui.Body.Close()
		if ui.StatusCode != http.StatusOK {
			return fmt.Errorf("web UI %s: %s", c.uiURL(), ui.Status)
		}
		return nil
	})
}

// isAPIError reports whether err, a gRPC error of the API, is a T.
func isAPIError[T error](err error) bool {
	var target T
	return errors.As(serviceerror.FromStatus(status.Convert(err)), &target)
}

// addSearchAttributes registers those of Ferry's search attributes that the
// namespace lacks, and checks that all are listed.
func (c *temporalCluster) addSearchAttributes(ctx context.Context, operator operatorservice.OperatorServiceClient) error {
	list, err := operator.ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: c.namespace})
	if err != nil {
		return fmt.Errorf("list search attributes: %w", err)
	}
	missing := map[string]enumspb.IndexedValueType{}
	for _, name := range sortedKeys(SearchAttributes) {
		if _, ok := list.CustomAttributes[name]; ok {
			continue
		}
		t, err := enumspb.IndexedValueTypeFromString(SearchAttributes[name])
		if err != nil {
			return stopWaiting(fmt.Errorf("search attribute %s: %w", name, err))
		}
		missing[name] = t
	}
	if len(missing) == 0 {
		return nil
	}
	if _, err := operator.AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace: c.namespace, SearchAttributes: missing,
	}); err != nil {
		return fmt.Errorf("add search attributes: %w", err)
	}
	return errors.New("search attributes added: checking that they are listed")
}

// probeWorkflowID names the workflow the readiness probe starts, terminates
// and deletes; it sets every search attribute of Ferry's.
const probeWorkflowID = "ferry-devenv-probe"

func (c *temporalCluster) probe(ctx context.Context, workflows workflowservice.WorkflowServiceClient) error {
	fields := map[string]*commonpb.Payload{}
	for name, typ := range SearchAttributes {
		data := `"probe"`
		if typ == "KeywordList" {
			data = `["probe"]`
		}
		fields[name] = &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(data)}
	}
	queue := &taskqueuepb.TaskQueue{Name: probeWorkflowID, Kind: enumspb.TASK_QUEUE_KIND_NORMAL}
	_, err := workflows.StartWorkflowExecution(ctx, &workflowservice.StartWorkflowExecutionRequest{
		Namespace:        c.namespace,
		WorkflowId:       probeWorkflowID,
		WorkflowType:     &commonpb.WorkflowType{Name: "FerryDevenvProbe"},
		TaskQueue:        queue,
		RequestId:        rand.Text(),
		SearchAttributes: &commonpb.SearchAttributes{IndexedFields: fields},
	})
	if err != nil && !isAPIError[*serviceerror.WorkflowExecutionAlreadyStarted](err) {
		return fmt.Errorf("start a probe workflow: %w", err)
	}
	if _, err := workflows.DescribeTaskQueue(ctx, &workflowservice.DescribeTaskQueueRequest{
		Namespace: c.namespace, TaskQueue: queue, TaskQueueType: enumspb.TASK_QUEUE_TYPE_WORKFLOW,
	}); err != nil {
		return fmt.Errorf("describe the probe's task queue (matching): %w", err)
	}
	execution := &commonpb.WorkflowExecution{WorkflowId: probeWorkflowID}
	if _, err := workflows.TerminateWorkflowExecution(ctx, &workflowservice.TerminateWorkflowExecutionRequest{
		Namespace: c.namespace, WorkflowExecution: execution, Reason: "ferry dev up: readiness probe",
	}); err != nil && !isAPIError[*serviceerror.NotFound](err) {
		return fmt.Errorf("terminate the probe workflow: %w", err)
	}
	if _, err := workflows.DeleteWorkflowExecution(ctx, &workflowservice.DeleteWorkflowExecutionRequest{
		Namespace: c.namespace, WorkflowExecution: execution,
	}); err != nil && !isAPIError[*serviceerror.NotFound](err) {
		return fmt.Errorf("delete the probe workflow: %w", err)
	}
	return nil
}

// stop stops the UI and the services, then PostgreSQL once they are gone.
func (c *temporalCluster) stop() error {
	err := stopAll(append([]*proc{c.ui}, c.services...), stopGrace)
	return errors.Join(err, c.pg.stop())
}
