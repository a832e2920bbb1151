package manifests

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path"
	"strings"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/gitsource"
)

// keyFormat is bumped when the key's encoding changes.
const keyFormat = 1

// keyInput is everything a render depends on. Its JSON encoding is
// canonical: struct fields keep their order and maps are sorted by key.
type keyInput struct {
	Format    int                  `json:"format"`
	Repo      string               `json:"repo"`
	SHA       string               `json:"sha"`
	Path      string               `json:"path"`
	Directory *app.DirectorySource `json:"directory"`
	Kustomize *app.KustomizeSource `json:"kustomize"`
	Helm      *app.HelmSource      `json:"helm"`
	Renderer  string               `json:"renderer"`
}

// Key names the rendered manifests of src at commit sha of repoURL, as
// produced by renderer version rendererVersion: the hex SHA-256 of a
// canonical encoding of the normalised repository URL, the SHA, the cleaned
// path, the directory, kustomize and helm options and the renderer version.
// src.RepoURL and src.TargetRevision are not used: repoURL and sha stand for
// them. A nil option section and an empty one differ, because an explicit
// section chooses the source type.
func Key(repoURL, sha string, src app.Source, rendererVersion string) string {
	b, err := json.Marshal(keyInput{
		Format:    keyFormat,
		Repo:      gitsource.NormalizeURL(repoURL),
		SHA:       strings.ToLower(strings.TrimSpace(sha)),
		Path:      cleanPath(src.Path),
		Directory: src.Directory,
		Kustomize: src.Kustomize,
		Helm:      src.Helm,
		Renderer:  rendererVersion,
	})
	if err != nil {
		// Only Helm's ValuesObject can fail (a value JSON cannot hold);
		// such a source can never render, so any distinct key will do.
		b = []byte(err.Error())
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func cleanPath(p string) string {
	p = strings.TrimSpace(p)
	if p == "" {
		return "."
	}
	return path.Clean(p)
}
