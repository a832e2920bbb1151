package app

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNames(t *testing.T) {
	for _, tc := range []struct{ ns, name, app, instance string }{
		{"", "web", "web", "web"},
		{"team-a", "web", "team-a/web", "team-a_web"},
	} {
		got := QualifiedName(tc.ns, tc.name)
		assert.Equal(t, tc.app, got)
		ns, name := SplitName(got)
		assert.Equal(t, tc.ns, ns, got)
		assert.Equal(t, tc.name, name, got)
		assert.Equal(t, tc.instance, InstanceName(got))
	}
	a := &Application{Metadata: ObjectMeta{Name: "web", Namespace: "team-a"}}
	a.Qualify("team-a")
	assert.Equal(t, "team-a/web", a.Metadata.Name)
	assert.Equal(t, "web", a.ReleaseName(), "a chart's release is named by the object's name")
	b := &Application{Metadata: ObjectMeta{Name: "web", Namespace: "argocd"}}
	b.Qualify("")
	assert.Equal(t, "web", b.Metadata.Name, "an app of the control namespace keeps its name")
}
