package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseAPICounts(t *testing.T) {
	f, err := os.Open("testdata/apiserver-metrics.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := parseAPICounts(f)
	if err != nil {
		t.Fatal(err)
	}
	if got := c[apiKey{Verb: "GET", Resource: "configmaps"}]; got != 1010 {
		t.Errorf("GET configmaps = %v, want 1010 (codes add up)", got)
	}
	if got := c[apiKey{Verb: "APPLY", Resource: "configmaps", DryRun: true}]; got != 990 {
		t.Errorf("dry-run APPLY configmaps = %v, want 990", got)
	}
	if got := c.total(isAppKind); got != 2030 {
		t.Errorf("requests to the apps' kinds = %v, want 2030 (WATCH and leases left out)", got)
	}
	if got := c.total(nil); got != 2533 {
		t.Errorf("every request = %v, want 2533 (WATCH left out)", got)
	}
	if got, want := c.breakdown(10), "GET 101, APPLY (dry run) 99.0, LIST 3.00"; got != want {
		t.Errorf("breakdown = %q, want %q", got, want)
	}
	later := apiCounts{{Verb: "GET", Resource: "configmaps"}: 1500}
	if got := later.sub(c).total(nil); got != 490 {
		t.Errorf("sub: %v, want 490", got)
	}
}

func TestSumMetric(t *testing.T) {
	text := `# TYPE ferry_app_reconcile_total counter
ferry_app_reconcile_total{namespace="default",task_queue="ferry",workflow_type="Application"} 40
ferry_app_reconcile_total{namespace="other",task_queue="ferry",workflow_type="Application"} 2
ferry_app_reconcile_total_other 100
ferry_app_reconcile_duration_seconds_count 9
`
	got, err := sumMetric(strings.NewReader(text), "ferry_app_reconcile_total")
	if err != nil || got != 42 {
		t.Errorf("sumMetric = %v, %v; want 42", got, err)
	}
	if got, err := sumMetric(strings.NewReader("plain 7\n"), "plain"); err != nil || got != 7 {
		t.Errorf("sumMetric without labels = %v, %v; want 7", got, err)
	}
	if _, err := sumMetric(strings.NewReader(text), "missing"); err == nil {
		t.Error("sumMetric of a missing metric: no error")
	}
}

func TestGitRequests(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("testdata/git.log")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "git.log"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	e := &Env{}
	got, err := e.parseGitLog(filepath.Join(dir, "git.log"), 0, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if got.LsRemote["fleet-00"] != 2 || got.LsRemote["team/fleet-01"] != 1 || got.Fetch["fleet-00"] != 1 || len(got.LsRemote) != 2 {
		t.Errorf("git requests = %+v; want 2 ls-remote and 1 fetch of fleet-00, 1 ls-remote of team/fleet-01, pushes left out", got)
	}
}

func TestParseLabels(t *testing.T) {
	got := parseLabels(`a="x",b="with \"quote\", comma",c=""`)
	if got["a"] != "x" || got["b"] != `with "quote", comma` || got["c"] != "" || len(got) != 3 {
		t.Errorf("parseLabels = %q", got)
	}
}

// TestStatusWrites: the objects scenario's idle figure counts the writes
// of Applications' status subresource, and only those.
func TestStatusWrites(t *testing.T) {
	const metrics = `apiserver_request_total{code="200",component="apiserver",dry_run="",group="argoproj.io",resource="applications",scope="resource",subresource="status",verb="PUT",version="v1alpha1"} 7
apiserver_request_total{code="409",component="apiserver",dry_run="",group="argoproj.io",resource="applications",scope="resource",subresource="status",verb="PUT",version="v1alpha1"} 1
apiserver_request_total{code="200",component="apiserver",dry_run="",group="argoproj.io",resource="applications",scope="resource",subresource="status",verb="PATCH",version="v1alpha1"} 2
apiserver_request_total{code="200",component="apiserver",dry_run="",group="argoproj.io",resource="applications",scope="resource",subresource="",verb="PUT",version="v1alpha1"} 100
apiserver_request_total{code="200",component="apiserver",dry_run="",group="argoproj.io",resource="applications",scope="resource",subresource="",verb="GET",version="v1alpha1"} 50
apiserver_request_total{code="200",component="apiserver",dry_run="",group="argoproj.io",resource="applications",scope="namespace",subresource="",verb="WATCH",version="v1alpha1"} 3
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="status",verb="PUT",version="v1"} 40
`
	c, err := parseAPICounts(strings.NewReader(metrics))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.total(isStatusWrite); got != 10 {
		t.Errorf("status writes = %v, want 10 (PUT and PATCH of applications/status, any code)", got)
	}
	if got := c.total(isApplication); got != 160 {
		t.Errorf("requests to applications = %v, want 160 (WATCH left out)", got)
	}
}
