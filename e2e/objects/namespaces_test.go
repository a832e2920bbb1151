package objects

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/e2e/e2etest"
)

// teamProject is an AppProject whose apps may live in namespace %[1]s of
// the control cluster (sourceNamespaces) and deploy to namespace %[1]s.
const teamProject = `apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata:
  name: %[1]s
  namespace: argocd
spec:
  sourceRepos: ['*']
  sourceNamespaces: [%[1]s]
  destinations:
  - {server: '*', namespace: %[1]s}
  clusterResourceWhitelist:
  - {group: '', kind: Namespace}
`

// teamApp is Argo CD's guestbook as the Application web of namespace
// %[1]s, project %[2]s, deploying to namespace %[3]s.
const teamApp = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: web
  namespace: %[1]s
spec:
  project: %[2]s
  source:
    repoURL: %[4]s
    targetRevision: HEAD
    path: guestbook
  destination:
    server: https://kubernetes.default.svc
    namespace: %[3]s
  syncPolicy:
    automated: {}
    syncOptions: [CreateNamespace=true]
`

// TestAppsInAnyNamespace: with --app-namespaces team-*, and the projects
// applied as AppProject objects, the web apps of
// namespaces team-a and team-b are two apps, team-a/web and team-b/web,
// each syncing to its own namespace. An app in a namespace its project's
// sourceNamespaces do not list is not synced and says why, in Argo CD's
// words; the objects of a namespace no glob lists are left alone.
func TestAppsInAnyNamespace(t *testing.T) {
	e := newEnv(t)
	e.StartWorkerEnv(t, []string{"FERRY_APP_NAMESPACES=team-*"}, e.AllRoles()...)
	repo := e.NewRepo(t, "guestbook-teams")
	repo.CopyDir(corpus+"/guestbook", "guestbook")
	sha := repo.CommitAndPush("guestbook")
	// The projects as AppProject objects: the worker applies them.
	for _, team := range []string{"team-a", "team-b"} {
		mustKubectl(t, fmt.Sprintf(teamProject, team), "apply", "-f", "-")
	}
	for _, team := range []string{"team-a", "team-b"} {
		e2etest.Eventually(t, time.Minute, "project "+team+" applied from its object", func() (bool, string) {
			out, err := e.Ferry(t, "project", "get", team)
			return err == nil && strings.Contains(out, team), out
		})
	}
	for _, ns := range []string{"team-a", "team-b", "team-c", "elsewhere"} {
		mustKubectl(t, "", "create", "namespace", ns)
	}

	mustKubectl(t, fmt.Sprintf(teamApp, "team-a", "team-a", "team-a", repo.URL), "-n", "team-a", "apply", "-f", "-")
	mustKubectl(t, fmt.Sprintf(teamApp, "team-b", "team-b", "team-b", repo.URL), "-n", "team-b", "apply", "-f", "-")
	// team-c is watched, but project team-a does not list it: the app
	// would deploy over team-a's if it ran.
	mustKubectl(t, fmt.Sprintf(teamApp, "team-c", "team-a", "team-a", repo.URL), "-n", "team-c", "apply", "-f", "-")
	// elsewhere is not watched at all.
	mustKubectl(t, fmt.Sprintf(teamApp, "elsewhere", "team-a", "team-a", repo.URL), "-n", "elsewhere", "apply", "-f", "-")

	kube := e.KubeClient(t, "us-east-1")
	for _, team := range []string{"team-a", "team-b"} {
		waitObjectIn(t, team, "web", 3*time.Minute, "Synced and Healthy at "+e2etest.Short(sha), func(o object) bool {
			return o.Status.Sync.Status == "Synced" && o.Status.Health.Status == "Healthy" && o.Status.Sync.Revision == sha
		})
		d, err := kube.AppsV1().Deployments(team).Get(context.Background(), "guestbook-ui", metav1.GetOptions{})
		require.NoError(t, err, "%s/web deployed to its own namespace", team)
		require.True(t, strings.HasPrefix(d.Annotations["ferry.dev/tracking-id"], team+"/web:"),
			"%s's Deployment is %s/web's: %v", team, team, d.Annotations)
		require.Equal(t, team+"_web", d.Labels["ferry.dev/app"], "the label writes the name as Argo CD does")
		out := e.MustFerry(t, "app", "get", team+"/web")
		require.Contains(t, out, "Synced", "ferry app get %s/web", team)
	}
	require.Regexp(t, `team-a\s+web\s+Synced\s+Healthy`, mustKubectl(t, "", "get", "applications", "-A"))
	require.Regexp(t, `team-b\s+web\s+Synced\s+Healthy`, mustKubectl(t, "", "get", "applications", "-A"))

	const refused = "application 'web' in namespace 'team-c' is not permitted to use project 'team-a'"
	waitObjectIn(t, "team-c", "web", time.Minute, "InvalidSpecError: "+refused, func(o object) bool {
		for _, c := range o.Status.Conditions {
			if c.Type == "InvalidSpecError" && strings.Contains(c.Message, refused) {
				return true
			}
		}
		return false
	})
	c := e.TemporalClient(t)
	for _, name := range []string{"team-c/web", "elsewhere/web"} {
		_, err := e2etest.Query(c, name)
		require.ErrorContains(t, err, "not found", "%s does not run", name)
	}
	o, ok, state := getObjectIn(t, "elsewhere", "web")
	require.True(t, ok, state)
	require.Empty(t, o.Status.Conditions, "an object of a namespace no glob lists is not written to")
	d, err := kube.AppsV1().Deployments("team-a").Get(context.Background(), "guestbook-ui", metav1.GetOptions{})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(d.Annotations["ferry.dev/tracking-id"], "team-a/web:"), "team-c/web synced nothing: %v", d.Annotations)

	mustKubectl(t, "", "-n", "team-c", "delete", "application", "web")
	e.RecordHistories(t, "app/team-a/web", "object-team-a-web")

	// The CLI names the app as the status does, and deletes its object.
	require.Contains(t, e.MustFerry(t, "app", "delete", "team-b/web"), `application "team-b/web" deleted`)
	_, ok, _ = getObjectIn(t, "team-b", "web")
	require.False(t, ok, "ferry app delete team-b/web deleted the object")
	_, err = kube.AppsV1().Deployments("team-b").Get(context.Background(), "guestbook-ui", metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err), "the delete cascaded in team-b: %v", err)
	_, err = kube.AppsV1().Deployments("team-a").Get(context.Background(), "guestbook-ui", metav1.GetOptions{})
	require.NoError(t, err, "team-a's app is another app")

	// Its AppProject object deleted, project team-b goes (no app uses it).
	mustKubectl(t, "", "delete", "appproject", "team-b")
	e2etest.Eventually(t, time.Minute, "project team-b deleted with its object", func() (bool, string) {
		out, err := e.Ferry(t, "project", "get", "team-b")
		return err != nil && strings.Contains(out, "not found"), out
	})
}
