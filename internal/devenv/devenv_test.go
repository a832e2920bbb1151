package devenv_test

import (
	"context"
	"crypto/rand"
	"net"
	"net/smtp"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	gitconfig "github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/ferry-gitops/ferry/internal/devenv"
)

var stack *devenv.Stack

func TestMain(m *testing.M) {
	os.Exit(devenv.RunTests(m, devenv.Options{Regions: []string{"us-east-1", "eu-west-1"}, Control: true}, &stack))
}

const poll = 50 * time.Millisecond

func TestKubernetesRegions(t *testing.T) {
	for _, region := range stack.Regions {
		t.Run(region, func(t *testing.T) {
			cs := kubeClient(t, region)
			ns := newNamespace(t, cs)

			t.Run("DeploymentBecomesAvailable", func(t *testing.T) {
				ctx := timeout(t, 60*time.Second)
				d := deployment("web", 3)
				_, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{})
				require.NoError(t, err)
				waitFor(t, ctx, "Deployment "+ns+"/web Available with 3 replicas", func(ctx context.Context) (bool, error) {
					d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
					if err != nil {
						return false, err
					}
					return d.Status.AvailableReplicas == 3 &&
						hasCondition(d.Status.Conditions, appsv1.DeploymentAvailable), nil
				})
			})

			t.Run("JobCompletes", func(t *testing.T) {
				ctx := timeout(t, 60*time.Second)
				_, err := cs.BatchV1().Jobs(ns).Create(ctx, job("ok", nil), metav1.CreateOptions{})
				require.NoError(t, err)
				waitForJob(t, ctx, cs, ns, "ok", batchv1.JobComplete)
			})

			t.Run("JobWithFailLabelFails", func(t *testing.T) {
				ctx := timeout(t, 60*time.Second)
				_, err := cs.BatchV1().Jobs(ns).Create(ctx, job("bad", map[string]string{devenv.FailLabel: "true"}), metav1.CreateOptions{})
				require.NoError(t, err)
				waitForJob(t, ctx, cs, ns, "bad", batchv1.JobFailed)

				pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "job-name=bad"})
				require.NoError(t, err)
				require.Len(t, pods.Items, 1)
				pod := pods.Items[0]
				require.Equal(t, corev1.PodFailed, pod.Status.Phase)
				require.Len(t, pod.Status.ContainerStatuses, 1)
				term := pod.Status.ContainerStatuses[0].State.Terminated
				require.NotNil(t, term)
				require.EqualValues(t, 1, term.ExitCode)
				require.Equal(t, "Error", term.Reason)
			})
		})
	}
}

func TestTemporalServerHasFerrySearchAttributes(t *testing.T) {
	ctx := timeout(t, 30*time.Second)
	c := temporalClient(t)
	_, err := c.CheckHealth(ctx, &client.CheckHealthRequest{})
	require.NoError(t, err)

	resp, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: stack.Namespace})
	require.NoError(t, err)
	want := map[string]enumspb.IndexedValueType{
		"FerryApp":          enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		"FerryRepoURL":      enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		"FerrySyncStatus":   enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		"FerryHealthStatus": enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		"FerryRevision":     enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		"FerryRegions":      enumspb.INDEXED_VALUE_TYPE_KEYWORD_LIST,
	}
	for name, typ := range want {
		require.Equal(t, typ, resp.CustomAttributes[name], "search attribute %s", name)
	}
}

func TestWorkflowSurvivesTemporalRestart(t *testing.T) {
	ctx := timeout(t, 120*time.Second)
	c := temporalClient(t)
	// No worker polls this queue: the workflow stays Running, stored only in
	// the server's SQLite file.
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:        "devenv-restart-probe",
		TaskQueue: "devenv-restart-probe",
	}, "Probe", "payload")
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = c.TerminateWorkflow(context.Background(), run.GetID(), run.GetRunID(), "test done")
	})

	require.NoError(t, stack.RestartTemporal(ctx))

	c2 := temporalClient(t)
	desc, err := c2.DescribeWorkflowExecution(ctx, run.GetID(), "")
	require.NoError(t, err)
	require.Equal(t, run.GetRunID(), desc.WorkflowExecutionInfo.Execution.RunId)
	require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, desc.WorkflowExecutionInfo.Status)
}

func TestRedisAnswers(t *testing.T) {
	ctx := timeout(t, 10*time.Second)
	rdb := redis.NewClient(&redis.Options{Addr: stack.RedisAddr})
	t.Cleanup(func() { _ = rdb.Close() })
	require.NoError(t, rdb.Set(ctx, "devenv-test", "value", 0).Err())
	got, err := rdb.Get(ctx, "devenv-test").Result()
	require.NoError(t, err)
	require.Equal(t, "value", got)
}

// TestMailpitTakesAMessage: a message sent to the stack's SMTP server, with
// credentials (it takes any), is in its mailbox.
func TestMailpitTakesAMessage(t *testing.T) {
	ctx := timeout(t, 30*time.Second)
	to := "devenv-" + strings.ToLower(rand.Text()[:8]) + "@example.com"
	host, _, err := net.SplitHostPort(stack.SMTPAddr)
	require.NoError(t, err)
	msg := "From: ferry@example.com\r\nTo: " + to + "\r\nSubject: hello from devenv\r\n\r\nthe body\r\n"
	require.NoError(t, smtp.SendMail(stack.SMTPAddr, smtp.PlainAuth("", "user", "pass", host), "ferry@example.com", []string{to}, []byte(msg)))
	mails, err := stack.Mailbox(ctx, to)
	require.NoError(t, err)
	require.Len(t, mails, 1)
	require.Equal(t, "hello from devenv", mails[0].Subject)
	require.Equal(t, "ferry@example.com", mails[0].From)
	require.Equal(t, "the body", strings.TrimSpace(mails[0].Text))
}

func TestGitServerTakesAPush(t *testing.T) {
	url, err := stack.CreateRepo("team/demo")
	require.NoError(t, err)
	require.Equal(t, stack.GitURL+"/team/demo.git", url)
	require.DirExists(t, filepath.Join(stack.StateDir, "git", "team", "demo.git"))

	sha := commitAndPush(t, url)
	require.Equal(t, sha, remoteHeads(t, url)["refs/heads/main"])
}

func TestGitPushCreatesAMissingRepo(t *testing.T) {
	url := stack.GitURL + "/pushed-first.git"
	sha := commitAndPush(t, url)
	require.Equal(t, sha, remoteHeads(t, url)["refs/heads/main"])
	require.DirExists(t, filepath.Join(stack.StateDir, "git", "pushed-first.git"))

	_, err := git.NewRemote(memory.NewStorage(), &gitconfig.RemoteConfig{Name: "origin", URLs: []string{stack.GitURL + "/never-pushed.git"}}).
		List(&git.ListOptions{})
	require.Error(t, err, "fetching a missing repo must not create it")
	require.NoDirExists(t, filepath.Join(stack.StateDir, "git", "never-pushed.git"))
}

// commitAndPush commits one file in a new local repo and pushes main to url.
func commitAndPush(t *testing.T, url string) (sha string) {
	t.Helper()
	dir := t.TempDir()
	repo, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.Main},
	})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "app.yaml"), []byte("kind: ConfigMap\n"), 0o644))
	wt, err := repo.Worktree()
	require.NoError(t, err)
	_, err = wt.Add("app.yaml")
	require.NoError(t, err)
	hash, err := wt.Commit("first", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}})
	require.NoError(t, err)
	_, err = repo.CreateRemote(&gitconfig.RemoteConfig{Name: "origin", URLs: []string{url}})
	require.NoError(t, err)
	require.NoError(t, repo.Push(&git.PushOptions{
		RemoteName: "origin",
		RefSpecs:   []gitconfig.RefSpec{"refs/heads/main:refs/heads/main"},
	}))
	return hash.String()
}

// remoteHeads is `git ls-remote url`: ref name to commit.
func remoteHeads(t *testing.T, url string) map[string]string {
	t.Helper()
	remote := git.NewRemote(memory.NewStorage(), &gitconfig.RemoteConfig{Name: "origin", URLs: []string{url}})
	refs, err := remote.List(&git.ListOptions{})
	require.NoError(t, err)
	heads := map[string]string{}
	for _, ref := range refs {
		heads[ref.Name().String()] = ref.Hash().String()
	}
	return heads
}

func TestEnvFileIsSourceable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "env")
	require.NoError(t, stack.WriteEnv(path))
	region := stack.Regions[0]
	script := `. "$1" && printf '%s\n' "$TEMPORAL_ADDRESS" "$REDIS_ADDR" "$FERRY_GIT_URL" "$FERRY_REGIONS" "$KUBECONFIG" &&
		kubectl --context "$FERRY_CONTROL_CONTEXT" get namespace "$FERRY_CONTROL_NAMESPACE" -o 'jsonpath={.metadata.name}{"\n"}' &&
		kubectl --context "$2" get node "kwok-$2" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}'`
	cmd := exec.Command("sh", "-c", script, "sh", path, region)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()} // kubectl must come from the env file
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, strings.Join([]string{
		stack.TemporalAddress, stack.RedisAddr, stack.GitURL, strings.Join(stack.Regions, ","), stack.Kubeconfig, "argocd", "True",
	}, "\n"), string(out))
}

// TestStopLeavesNothing runs a second, one-region stack next to the shared
// one and checks that Stop ends every process it started and removes its
// temporary state dir.
func TestStopLeavesNothing(t *testing.T) {
	ctx := timeout(t, 3*time.Minute)
	s, err := devenv.Start(ctx, devenv.Options{Regions: []string{"ap-south-1"}, ToolsBin: stack.ToolsBin})
	require.NoError(t, err)
	pids := s.Pids()
	require.Len(t, pids, 10, "etcd, apiserver, controller-manager, scheduler, kwok, temporal, redis, registry, dex, mailpit: %v", pids)
	require.Contains(t, pids, "dex")
	require.Contains(t, pids, "mailpit")
	require.Len(t, devenv.Alive(pids), len(pids), "every process runs before Stop")

	require.NoError(t, s.Stop())
	require.Empty(t, devenv.Alive(pids))
	require.Empty(t, processesMentioning(t, s.StateDir))
	require.NoDirExists(t, s.StateDir)
	require.NoError(t, s.Stop(), "a second Stop is a no-op")
}

// TestStartFailureStopsEverything starts a stack whose kube-apiserver
// cannot start: Start must say which process failed and where its log is,
// and leave nothing running.
func TestStartFailureStopsEverything(t *testing.T) {
	bin := t.TempDir()
	entries, err := os.ReadDir(stack.ToolsBin)
	require.NoError(t, err)
	for _, e := range entries {
		require.NoError(t, os.Symlink(filepath.Join(stack.ToolsBin, e.Name()), filepath.Join(bin, e.Name())))
	}
	broken := filepath.Join(bin, "kube-apiserver")
	require.NoError(t, os.Remove(broken))
	require.NoError(t, os.WriteFile(broken, []byte("#!/bin/sh\necho 'cannot start: on purpose' >&2\nexit 3\n"), 0o755))
	stateDir := filepath.Join(t.TempDir(), "state")

	ctx := timeout(t, 2*time.Minute)
	s, err := devenv.Start(ctx, devenv.Options{Regions: []string{"sa-east-1"}, ToolsBin: bin, StateDir: stateDir})
	t.Logf("Start failed as expected: %v", err)
	require.Nil(t, s)
	require.ErrorContains(t, err, "kube-apiserver for region sa-east-1 exited before it was ready")
	require.ErrorContains(t, err, filepath.Join(stateDir, "logs", "sa-east-1-apiserver.log"))
	require.ErrorContains(t, err, "cannot start: on purpose", "the error quotes the end of the log")
	require.Empty(t, processesMentioning(t, stateDir))
}

// processesMentioning lists the command lines under /proc that contain s.
func processesMentioning(t *testing.T, s string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(cmdline), s) {
			continue
		}
		out = append(out, e.Name()+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return out
}

func kubeClient(t *testing.T, region string) kubernetes.Interface {
	t.Helper()
	cfg, err := stack.RestConfig(region)
	require.NoError(t, err)
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	return cs
}

// newNamespace creates a namespace and waits for its default ServiceAccount,
// without which no pod can be created in it.
func newNamespace(t *testing.T, cs kubernetes.Interface) string {
	t.Helper()
	ctx := timeout(t, 30*time.Second)
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "devenv-test-"},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	waitFor(t, ctx, "ServiceAccount "+ns.Name+"/default", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	return ns.Name
}

func deployment(name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{"kubernetes.io/os": "linux"},
					Containers:   []corev1.Container{{Name: "app", Image: "nginx:1.27"}},
				},
			},
		},
	}
}

func job(name string, labels map[string]string) *batchv1.Job {
	backoff := int32(0)
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{
			BackoffLimit: &backoff,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "task", Image: "busybox:1.36", Command: []string{"true"}}},
				},
			},
		},
	}
}

func waitForJob(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns, name string, want batchv1.JobConditionType) {
	t.Helper()
	waitFor(t, ctx, "Job "+ns+"/"+name+" "+string(want), func(ctx context.Context) (bool, error) {
		j, err := cs.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range j.Status.Conditions {
			if c.Status != corev1.ConditionTrue {
				continue
			}
			if c.Type == want {
				return true, nil
			}
			if c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed {
				t.Fatalf("Job %s/%s ended %s, want %s: %s", ns, name, c.Type, want, c.Message)
			}
		}
		return false, nil
	})
}

func hasCondition(conds []appsv1.DeploymentCondition, typ appsv1.DeploymentConditionType) bool {
	for _, c := range conds {
		if c.Type == typ && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func temporalClient(t *testing.T) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{HostPort: stack.TemporalAddress, Namespace: stack.Namespace})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

func timeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func waitFor(t *testing.T, ctx context.Context, what string, cond wait.ConditionWithContextFunc) {
	t.Helper()
	start := time.Now()
	err := wait.PollUntilContextCancel(ctx, poll, true, cond)
	require.NoError(t, err, "waiting for %s", what)
	t.Logf("%s after %s", what, time.Since(start).Round(time.Millisecond))
}
