package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ferry-gitops/ferry/internal/app"
)

func impersonatingProject(repoURL string) string {
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata:
  name: team-imp
spec:
  sourceRepos: [%s]
  destinations:
  - {name: us-east-1, namespace: team-imp}
  - {name: us-east-1, namespace: team-imp-other}
  destinationServiceAccounts:
  - {server: '*', namespace: team-imp, defaultServiceAccount: deployer}
`, repoURL)
}

func impersonatingApp(name, repoURL, namespace string) string {
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: %s
spec:
  project: team-imp
  source: {repoURL: %s, targetRevision: main, path: app}
  destination: {name: us-east-1, namespace: %s}
`, name, repoURL, namespace)
}

// TestImpersonation: project team-imp names ServiceAccount deployer for
// namespace team-imp, whose Role allows ConfigMaps. The worker's own
// identity is an admin, yet the app's sync writes as deployer: the API
// server's audit log says so, and once the Role loses the verb patch, the
// sync fails with the API server's Forbidden naming the ServiceAccount. An
// app of the same project in a namespace no entry covers fails its sync,
// having written nothing; a forged Sync for another namespace still writes
// as the app's own ServiceAccount.
func TestImpersonation(t *testing.T) {
	startWorker(t)
	ctx := context.Background()
	cs := kubeClient(t, "us-east-1")
	for _, ns := range []string{"team-imp", "team-imp-other"} {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	}
	allVerbs := []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	deployerMay(t, cs, allVerbs)

	repo := newRepo(t, "team-imp")
	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v1")})
	repo.commitAndPush("settings v1")
	mustFerry(t, "project", "apply", "-f", writeFile(t, impersonatingProject(repo.URL)))
	mustFerry(t, "app", "apply", "-f", writeFile(t, impersonatingApp("team-imp-web", repo.URL, "team-imp")))
	mustFerry(t, "app", "apply", "-f", writeFile(t, impersonatingApp("team-imp-elsewhere", repo.URL, "team-imp-other")))

	out := mustFerry(t, "app", "sync", "team-imp-web", "--wait")
	t.Log(out)
	cm, err := cs.CoreV1().ConfigMaps("team-imp").Get(ctx, "settings", metav1.GetOptions{})
	require.NoError(t, err, "the sync as deployer, which may write ConfigMaps, applied settings")
	require.Equal(t, "v1", cm.Data["version"])
	deployer := app.ServiceAccountUser("team-imp", "deployer")
	ev := auditedWrite(t, "us-east-1", "configmaps", "team-imp", "settings")
	require.Equal(t, deployer, ev.ImpersonatedUser.Username, "the write went as the ServiceAccount: %+v", ev)
	require.NotEqual(t, deployer, ev.User.Username, "the worker authenticated as itself")

	// No entry covers team-imp-other: the sync fails, naming why, and
	// writes nothing, though the worker itself could.
	out, err = ferry(t, "app", "sync", "team-imp-elsewhere", "--wait")
	require.Error(t, err, out)
	op := lastOp(t, "team-imp-elsewhere")
	require.Equal(t, app.OperationFailed, op.Phase)
	require.Contains(t, op.Message, `project "team-imp" has no service account to impersonate for destination us-east-1/team-imp-other`)
	_, err = cs.CoreV1().ConfigMaps("team-imp-other").Get(ctx, "settings", metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err), "nothing of the sync is in team-imp-other: %v", err)

	// The platform team takes patch away: the next sync is refused by the
	// API server, for deployer.
	deployerMay(t, cs, []string{"get", "list", "watch", "create", "update", "delete"})
	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v2")})
	sha := repo.commitAndPush("settings v2")
	mustFerry(t, "app", "refresh", "team-imp-web")
	out, err = ferry(t, "app", "sync", "team-imp-web", "--revision", sha, "--wait")
	require.Error(t, err, out)
	op = lastOp(t, "team-imp-web")
	require.Equal(t, app.OperationFailed, op.Phase)
	forbidden := `configmaps "settings" is forbidden: User "` + deployer + `" cannot patch resource "configmaps"`
	require.Contains(t, op.Message, forbidden)
	cm, err = cs.CoreV1().ConfigMaps("team-imp").Get(ctx, "settings", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, "v1", cm.Data["version"], "the worker, an admin itself, did not write v2 some other way")

	recordHistories(t, "team-imp-web")
	mustFerry(t, "app", "delete", "team-imp-elsewhere", "--cascade=false")
	deployerMay(t, cs, allVerbs)

	// A Temporal client sends team-imp-web's sync again, for namespace
	// team-imp-other, which the project allows: the region worker takes the
	// ServiceAccount from the app's own destination (team-imp), not from
	// the input, and deployer may write nothing in team-imp-other.
	forged := syncInputOf(t, "team-imp-web", sha)
	forged.OperationID, forged.Namespace = "forged", "team-imp-other"
	err = scheduleSync(t, forged)
	require.Error(t, err)
	require.Contains(t, err.Error(), `User "`+deployer+`" cannot patch resource "configmaps" in API group "" in the namespace "team-imp-other"`)
	_, err = cs.CoreV1().ConfigMaps("team-imp-other").Get(ctx, "settings", metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err), "the forged sync wrote nothing in team-imp-other: %v", err)
	mustFerry(t, "app", "delete", "team-imp-web", "--cascade")
	_, err = cs.CoreV1().ConfigMaps("team-imp").Get(ctx, "settings", metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err), "the cascading delete removed settings: %v", err)
	ev = auditedDelete(t, "us-east-1", "configmaps", "team-imp", "settings")
	require.Equal(t, deployer, ev.ImpersonatedUser.Username, "the delete went as the ServiceAccount too")
	mustFerry(t, "project", "delete", "team-imp")
}

// deployerMay gives ServiceAccount team-imp/deployer a Role allowing
// verbs on ConfigMaps (creating both the first time).
func deployerMay(t *testing.T, cs kubernetes.Interface, verbs []string) {
	t.Helper()
	ctx := context.Background()
	_, err := cs.CoreV1().ServiceAccounts("team-imp").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "deployer"}}, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "deployer"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: verbs}}}
	if _, err := cs.RbacV1().Roles("team-imp").Update(ctx, role, metav1.UpdateOptions{}); apierrors.IsNotFound(err) {
		_, err = cs.RbacV1().Roles("team-imp").Create(ctx, role, metav1.CreateOptions{})
		require.NoError(t, err)
	} else {
		require.NoError(t, err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "deployer"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "deployer"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "deployer", Namespace: "team-imp"}}}
	_, err = cs.RbacV1().RoleBindings("team-imp").Create(ctx, binding, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
}

// auditEvent is what the test reads of an audit.k8s.io/v1 Event.
type auditEvent struct {
	Verb             string                    `json:"verb"`
	RequestURI       string                    `json:"requestURI"`
	Stage            string                    `json:"stage"`
	User             struct{ Username string } `json:"user"`
	ImpersonatedUser struct{ Username string } `json:"impersonatedUser"`
	ObjectRef        struct {
		Resource, Namespace, Name string
	} `json:"objectRef"`
	ResponseStatus struct{ Code int } `json:"responseStatus"`
}

// auditedWrite is the last apply (a patch, not a dry run) of the object in
// the region's audit log.
func auditedWrite(t *testing.T, region, resource, namespace, name string) auditEvent {
	t.Helper()
	return lastAudited(t, region, "patch", resource, namespace, name)
}

func auditedDelete(t *testing.T, region, resource, namespace, name string) auditEvent {
	t.Helper()
	return lastAudited(t, region, "delete", resource, namespace, name)
}

// lastAudited is the last event of a successful request (verb) on the
// object in the region's audit log; it waits for the log to have one, as
// the API server writes it in batches.
func lastAudited(t *testing.T, region, verb, resource, namespace, name string) auditEvent {
	t.Helper()
	var last *auditEvent
	eventually(t, 30*time.Second, "the audit log has the "+verb+" of "+resource+" "+namespace+"/"+name, func() (bool, string) {
		f, err := os.Open(stack.AuditLog(region))
		if err != nil {
			return false, err.Error()
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 1<<20), 1<<24)
		for sc.Scan() {
			if !strings.Contains(sc.Text(), `"`+name+`"`) {
				continue
			}
			var ev auditEvent
			if json.Unmarshal(sc.Bytes(), &ev) != nil {
				continue
			}
			o := ev.ObjectRef
			if ev.Verb == verb && !strings.Contains(ev.RequestURI, "dryRun=") && ev.Stage == "ResponseComplete" && ev.ResponseStatus.Code < 300 &&
				o.Resource == resource && o.Namespace == namespace && o.Name == name {
				last = &ev
			}
		}
		return last != nil, fmt.Sprint(sc.Err())
	})
	return *last
}

// TestImpersonationOfASystemServiceAccountRefused: a project, written
// through Temporal as anyone with access could, names kube-system's
// replicaset-controller for its destination. The region worker, started
// with --impersonation-namespaces team-*, refuses to write as it: the sync
// fails naming the ServiceAccount, the project and the setting, and
// nothing is written, though both the worker and that ServiceAccount could.
func TestImpersonationOfASystemServiceAccountRefused(t *testing.T) {
	startWorker(t, "--impersonation-namespaces", "team-*")
	ctx := context.Background()
	cs := kubeClient(t, "us-east-1")
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-sys"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), "team-sys", metav1.DeleteOptions{}) })

	repo := newRepo(t, "team-sys")
	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v1")})
	repo.commitAndPush("settings v1")
	project := strings.NewReplacer("team-imp-other", "team-sys-other", "team-imp", "team-sys",
		"defaultServiceAccount: deployer", "defaultServiceAccount: 'kube-system:replicaset-controller'").Replace(impersonatingProject(repo.URL))
	mustFerry(t, "project", "apply", "-f", writeFile(t, project))
	mustFerry(t, "app", "apply", "-f", writeFile(t, strings.ReplaceAll(impersonatingApp("team-sys-web", repo.URL, "team-sys"), "team-imp", "team-sys")))

	out, err := ferry(t, "app", "sync", "team-sys-web", "--wait")
	require.Error(t, err, out)
	op := lastOp(t, "team-sys-web")
	require.Equal(t, app.OperationFailed, op.Phase)
	require.Contains(t, op.Message, `project "team-sys" names ServiceAccount kube-system:replicaset-controller to write as in region us-east-1, `+
		`but the region's workers may impersonate ServiceAccounts of only namespaces team-* (--impersonation-namespaces)`)
	_, err = cs.CoreV1().ConfigMaps("team-sys").Get(ctx, "settings", metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err), "nothing of the sync is in team-sys: %v", err)

	mustFerry(t, "app", "delete", "team-sys-web", "--cascade=false")
	mustFerry(t, "project", "delete", "team-sys")
}
