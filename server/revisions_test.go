package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// TestRevisionMetadataSource: ?sourceIndex= picks the entry of a
// multi-source app's spec.sources (0 by default, as in Argo CD); an index
// out of range or a Helm chart's is a 400 naming the parameter and what
// to write.
func TestRevisionMetadataSource(t *testing.T) {
	multi := &contract.View{Application: app.Application{Metadata: app.ObjectMeta{Name: "web"}, Spec: app.Spec{Sources: []app.Source{
		{RepoURL: "https://git.example.com/apps.git", Path: "web"},
		{RepoURL: "https://charts.example.com", Chart: "redis", TargetRevision: "1.2.3"},
		{RepoURL: "https://git.example.com/values.git", Ref: "values"},
	}}}}
	single := &contract.View{Application: app.Application{Metadata: app.ObjectMeta{Name: "one"},
		Spec: app.Spec{Source: app.Source{RepoURL: "https://git.example.com/one.git"}}}}
	tests := []struct {
		name  string
		v     *contract.View
		query string
		repo  string // "" when refused
		says  string
	}{
		{"the only source", single, "", "https://git.example.com/one.git", ""},
		{"the first by default", multi, "", "https://git.example.com/apps.git", ""},
		{"the third", multi, "?sourceIndex=2", "https://git.example.com/values.git", ""},
		{"a chart", multi, "?sourceIndex=1", "", `source 1 of application "web" is Helm chart "redis"`},
		{"out of range", multi, "?sourceIndex=3", "", `sourceIndex="3": application "web" has 3 source(s): write an index from 0 to 2`},
		{"past the only source", single, "?sourceIndex=1", "", `write an index from 0 to 0`},
		{"not a number", multi, "?sourceIndex=first", "", `sourceIndex="first"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			src, ok := metadataSource(rec, httptest.NewRequest("GET", "/x"+tt.query, nil), tt.v)
			if tt.repo != "" {
				assert.True(t, ok, rec.Body.String())
				assert.Equal(t, tt.repo, src.RepoURL)
				return
			}
			assert.False(t, ok)
			assert.Equal(t, http.StatusBadRequest, rec.Code)
			var body struct{ Message string }
			assert.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
			assert.Contains(t, body.Message, tt.says)
		})
	}
}

// TestRevisionNames: a SHA, a branch, a tag or a ref is a revision; what
// git would read as an option or a range is not.
func TestRevisionNames(t *testing.T) {
	for _, rev := range []string{"1a2b3c4", "0123456789abcdef0123456789abcdef01234567", "main", "v1.2.3", "refs/heads/feature/x", "release_1+build"} {
		assert.True(t, revisionName.MatchString(rev), rev)
	}
	for _, rev := range []string{"", "-n", "--upload-pack=x", "main branch", "a;b", "HEAD~1", "a^{}"} {
		assert.False(t, revisionName.MatchString(rev), rev)
	}
}
