package ferryclient

import (
	"context"
	"fmt"
	"sync"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"golang.org/x/sync/singleflight"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// ProjectCache answers GetProject from its last answer while the project's
// workflow has not moved since: a describe of the workflow names its run
// and the length of its history, which every accepted update, a delete
// and a continue-as-new change. Temporal's history service answers a
// describe by itself, where a query waits for a workflow task on a worker:
// under a fleet's load, behind every other app's. Every app's reconcile and
// every region's sync reads its project, so a fleet asks one workflow
// thousands of times for the same answer. Callers must not change what it
// returns: the view is shared.
type ProjectCache struct {
	Client client.Client

	mu     sync.Mutex
	known  map[string]cachedProject
	flight singleflight.Group
}

type cachedProject struct {
	run    string
	length int64
	view   *contract.ProjectView
}

// Get is GetProject, from the cache while the project's workflow has not
// moved.
func (p *ProjectCache) Get(ctx context.Context, name string) (*contract.ProjectView, error) {
	if name == "" {
		name = app.DefaultProject
	}
	d, err := p.Client.DescribeWorkflowExecution(ctx, projects.IDPrefix+name, "")
	switch {
	case err != nil && isNotFound(err):
		return notRunningProject(name)
	case err != nil:
		return nil, err
	}
	info := d.GetWorkflowExecutionInfo()
	if info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return notRunningProject(name)
	}
	at := cachedProject{run: info.GetExecution().GetRunId(), length: info.GetHistoryLength()}
	p.mu.Lock()
	c, ok := p.known[name]
	p.mu.Unlock()
	if ok && c.run == at.run && c.length == at.length {
		return c.view, nil
	}
	v, err, _ := p.flight.Do(fmt.Sprintf("%s@%s#%d", name, at.run, at.length), func() (any, error) {
		return GetProject(ctx, p.Client, name)
	})
	if err != nil {
		return nil, err
	}
	at.view = v.(*contract.ProjectView)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.known == nil {
		p.known = map[string]cachedProject{}
	}
	p.known[name] = at
	return at.view, nil
}

// notRunningProject is GetProject's answer for a project whose workflow
// does not run.
func notRunningProject(name string) (*contract.ProjectView, error) {
	if name == app.DefaultProject {
		v := contract.ViewOfProject(app.DefaultAppProject())
		return &v, nil
	}
	return nil, &contract.ProjectNotFoundError{Name: name}
}
