package appset

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/regions"
)

const corpus = "../../../shared/corpus"

// dirTree serves a directory of the machine as a repository's tree, under
// a prefix (the examples name their paths in Argo CD's repository).
type dirTree struct {
	root, prefix string
	dirs, files  []string
}

func newDirTree(t *testing.T, root, prefix string) *dirTree {
	d := &dirTree{root: root, prefix: prefix}
	require.NoError(t, filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel := prefix + filepath.ToSlash(strings.TrimPrefix(p, root+"/"))
		if e.IsDir() {
			d.dirs = append(d.dirs, rel)
		} else {
			d.files = append(d.files, rel)
		}
		return nil
	}))
	return d
}

func (d *dirTree) Dirs() []string  { return d.dirs }
func (d *dirTree) Files() []string { return d.files }
func (d *dirTree) ReadFile(name string) ([]byte, error) {
	return os.ReadFile(filepath.Join(d.root, strings.TrimPrefix(name, d.prefix)))
}
func (d *dirTree) Tree(context.Context, string, string) (Tree, error) { return d, nil }

// testRegions is the regions configuration regions3 comes from.
func testRegions(t *testing.T) *regions.Config {
	var list []regions.Region
	for _, c := range regions3 {
		r := regions.Region{Name: c.Name, Labels: c.Labels}
		if c.Server == regions.InClusterServer {
			r.InCluster = true
		} else {
			r.Server = c.Server
		}
		list = append(list, r)
	}
	cfg, err := regions.New(list)
	require.NoError(t, err)
	return cfg
}

var regions3 = []Cluster{
	{Name: "us-east-1", Server: "https://us-east-1.example", Labels: map[string]string{"env": "prod", "environment": "prod", "use-kafka": "false"}},
	{Name: "eu-west-1", Server: "https://eu-west-1.example", Labels: map[string]string{"env": "staging", "environment": "staging"}},
	{Name: "ap-south-1", Server: "https://kubernetes.default.svc", Labels: map[string]string{"env": "prod", "environment": "prod"}},
}

// TestArgoCDExamples: the ApplicationSets of Argo CD's examples and of real
// repositories are accepted and generate apps when their generators are
// supported; the others are refused naming the generator or field.
func TestArgoCDExamples(t *testing.T) {
	var files []string
	for _, dir := range []string{"argocd-appset-examples", "realworld-apps"} {
		require.NoError(t, filepath.WalkDir(filepath.Join(corpus, dir), func(p string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() && strings.HasSuffix(p, ".yaml") && !strings.Contains(p, "/proposal/") {
				if data, _ := os.ReadFile(p); strings.Contains(string(data), "\nkind: ApplicationSet") || strings.HasPrefix(string(data), "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet") {
					files = append(files, p)
				}
			}
			return err
		}))
	}
	require.GreaterOrEqual(t, len(files), 40)
	// The pullRequest and scmProvider examples read the SCM stand-in.
	scmStandIn := corpusStandIn(t)
	// Generators that read the control namespace, which this test has not.
	controlRE := regexp.MustCompile(`(?m)^\s*- (clusterDecisionResource|plugin):`)
	src := newDirTree(t, filepath.Join(corpus, "argocd-appset-examples"), "applicationset/examples/")
	accepted, generated := 0, 0
	for _, f := range files {
		t.Run(strings.TrimPrefix(f, corpus+"/"), func(t *testing.T) {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			set, err := Read(data)
			if err != nil {
				// Only the Application's own schema may refuse, as it
				// refuses the same fields in ferry app apply.
				var ve *app.ValidationError
				require.ErrorAs(t, err, &ve)
				for _, fe := range ve.Errors {
					require.True(t, strings.HasPrefix(fe.Field, "spec.template.spec."), "%s: %s", fe.Field, fe.Message)
				}
				t.Logf("template refused as an Application: %v", err)
				return
			}
			accepted++
			res, err := Generate(context.Background(), set, Options{Source: src, Clusters: regions3, SCM: scmStandIn,
				Validate: app.ValidateOptions{Regions: testRegions(t)}})
			if strings.HasSuffix(f, "matrix/list-and-list.yaml") {
				// Argo CD's own example names .path without a git generator.
				require.ErrorContains(t, err, `map has no entry for key "path"`)
				return
			}
			if controlRE.Match(data) {
				require.ErrorContains(t, err, "in the control namespace, and none is configured")
				return
			}
			if errors.Is(err, ErrGenerate) && strings.Contains(f, "realworld") {
				t.Logf("generation needs the repository's own tree: %v", err)
				return
			}
			require.NoError(t, err)
			generated += len(res.Apps)
			if strings.HasSuffix(f, "matrix/list-and-list-fasttemplate.yaml") {
				// As above: the placeholder stays, and the app is invalid.
				require.Len(t, res.Invalid, 4)
				require.Contains(t, res.Invalid[0], `"{{path.basename}}" is not a valid namespace`)
				return
			}
			for _, msg := range res.Invalid {
				if strings.Contains(f, "argocd-appset-examples") {
					// Servers Ferry maps to no region (1.2.3.4 in the docs).
					require.Contains(t, msg, "spec.destination.server")
				} else {
					// Real repositories' apps are refused as ferry app apply
					// refuses them, each naming its app.
					require.Contains(t, msg, "application \"")
				}
			}
			ownTree := !slices.ContainsFunc(set.GitRepos(), func(r string) bool { return r != "https://github.com/argoproj/argo-cd.git" })
			if strings.Contains(f, "argocd-appset-examples") && ownTree {
				require.NotEmpty(t, len(res.Apps)+len(res.Invalid), "the example generates apps")
			}
			for _, a := range res.Apps {
				require.NotEmpty(t, a.Metadata.Name)
			}
		})
	}
	t.Logf("%d files, %d accepted, %d apps generated", len(files), accepted, generated)
}
