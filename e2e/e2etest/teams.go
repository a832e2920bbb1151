package e2etest

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// Project is an AppProject object of a team: any repository, its own
// namespace, which it may create; extra is YAML under spec (roles…).
func Project(name, extra string) string {
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata:
  name: %[1]s
  namespace: argocd
spec:
  sourceRepos: ['*']
  destinations:
  - {server: '*', namespace: %[1]s}
  clusterResourceWhitelist:
  - {group: '', kind: Namespace}
%[2]s`, name, extra)
}

// TeamApp is an Application object of project deploying the app/ folder
// of repoURL to the project's namespace, synced by hand.
func TeamApp(name, project, repoURL string) string {
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: %[1]s
  namespace: argocd
spec:
  project: %[2]s
  source: {repoURL: %[3]s, targetRevision: HEAD, path: app}
  destination: {server: https://kubernetes.default.svc, namespace: %[2]s}
  syncPolicy: {syncOptions: [CreateNamespace=true]}
`, name, project, repoURL)
}

// DeployTeamApp makes the project name and its app name from a new
// repository holding files, has the admin sync it through the server, and
// waits until it is Synced and Healthy. It answers the repository and the
// commit.
func (s *Server) DeployTeamApp(t *testing.T, e *Env, admin, name string, files map[string]string) (*Repo, string) {
	t.Helper()
	repo := e.NewRepo(t, name)
	repo.Write(files)
	sha := repo.CommitAndPush("the app " + name)
	ControlKubectl(t, e.Stack, Project(name, ""), "apply", "-f", "-")
	ControlKubectl(t, e.Stack, TeamApp(name, name, repo.URL), "apply", "-f", "-")
	Eventually(t, 2*time.Minute, "the server shows app "+name, func() (bool, string) {
		status, body := s.Do(t, admin, "GET", "/api/v1/applications/"+name, nil)
		return status == http.StatusOK, body
	})
	s.MustDo(t, admin, "POST", "/api/v1/applications/"+name+"/sync", map[string]any{}, http.StatusOK, nil)
	Eventually(t, 3*time.Minute, "app "+name+" is Synced and Healthy", func() (bool, string) {
		var v struct {
			Status struct {
				Sync   struct{ Status string }
				Health struct{ Status string }
			}
		}
		s.MustDo(t, admin, "GET", "/api/v1/applications/"+name, nil, http.StatusOK, &v)
		return v.Status.Sync.Status == "Synced" && v.Status.Health.Status == "Healthy", fmt.Sprintf("%+v", v.Status)
	})
	return repo, sha
}
