package app

import (
	"strings"
	"testing"
)

func TestImpersonationScope(t *testing.T) {
	for _, c := range []struct {
		namespaces []string
		sa         string
		want       bool
	}{
		{nil, "team-a", true},
		{nil, "kube-system", false},
		{nil, "kube-node-lease", false},
		{[]string{"team-*"}, "team-a", true},
		{[]string{"team-*"}, "ferry-system", false},
		{[]string{"team-*", "kube-system"}, "kube-system", true},
	} {
		s := ImpersonationScope{Namespaces: c.namespaces, Flag: "--impersonation-namespaces"}
		err := s.Check(ServiceAccountUser(c.sa, "deployer"), "web", "team-a", "us-east-1")
		if (err == nil) != c.want {
			t.Errorf("scope %v, ServiceAccount in %s: err = %v, want allowed %v", c.namespaces, c.sa, err, c.want)
		}
		if err != nil {
			for _, want := range []string{`app "web": project "team-a" names ServiceAccount ` + c.sa + ":deployer", "--impersonation-namespaces", "region us-east-1"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q: %v", want, err)
				}
			}
		}
	}
	if err := (ImpersonationScope{Namespaces: []string{"team-[a"}, Flag: "--impersonation-namespaces"}).Validate(); err == nil ||
		!strings.Contains(err.Error(), `--impersonation-namespaces: "team-[a" is not a valid glob`) {
		t.Errorf("a bad glob: %v", err)
	}
}
