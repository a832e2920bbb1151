package objects

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/e2e/e2etest"
)

// TestAnInvalidObjectSaysWhyAndStartsOnceFixed: every problem of the
// object is named in Argo CD's InvalidSpecError condition and no app
// starts; the fixed object starts its app and the condition goes. The app
// is the object's: a spec sent straight through Temporal (ferry app apply
// without the control cluster) is refused, naming the object.
func TestAnInvalidObjectSaysWhyAndStartsOnceFixed(t *testing.T) {
	e := newEnv(t)
	e.StartWorker(t, e.AllRoles()...)
	repo := e.NewRepo(t, "guestbook-invalid")
	repo.CopyDir(corpus+"/guestbook", "guestbook")
	sha := repo.CommitAndPush("guestbook")
	valid := strings.Replace(fmt.Sprintf(guestbook, repo.URL), "name: guestbook\n", "name: fixme\n", 1)
	invalid := strings.NewReplacer("  project: default\n", "  project: default\n  sourcee: {}\n",
		"    server: https://kubernetes.default.svc\n", "    name: nowhere\n").Replace(valid)

	mustKubectl(t, invalid, "apply", "-f", "-")
	o := waitObject(t, "fixme", 2*time.Minute, "an InvalidSpecError condition", func(o object) bool {
		return len(o.Status.Conditions) > 0
	})
	require.Len(t, o.Status.Conditions, 1)
	c := o.Status.Conditions[0]
	require.Equal(t, "InvalidSpecError", c.Type)
	require.Contains(t, c.Message, "spec.sourcee", "the unknown field")
	require.Contains(t, c.Message, "nowhere", "the destination no region answers to")
	_, err := e2etest.Query(e.TemporalClient(t), "fixme")
	require.ErrorContains(t, err, "not found", "no app starts")

	mustKubectl(t, valid, "apply", "-f", "-")
	waitObject(t, "fixme", 3*time.Minute, "running at "+e2etest.Short(sha)+", without the condition", func(o object) bool {
		return o.Status.Sync.Revision == sha && len(o.Status.Conditions) == 0
	})

	file := t.TempDir() + "/fixme.yaml"
	require.NoError(t, writeFile(file, valid))
	out, err := e.Ferry(t, "app", "apply", "--control-namespace", "", "-f", file)
	require.Error(t, err, out)
	require.Contains(t, out, "Application object argocd/fixme")
	require.Contains(t, out, "kubectl -n argocd edit application fixme")
}
