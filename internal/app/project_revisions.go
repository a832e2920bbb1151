package app

import "strings"

// AnnotationSyncAnyRevision, set to "true" on an AppProject, lets a sync
// of the project's apps (ferry app sync --revision) name any revision of
// their repository: a ref outside branches and tags (refs/pull/1/head), or
// a commit no branch or tag reaches. Without it a sync takes a branch, a
// tag, or a commit in their history; the app's spec may name any revision
// either way. A Ferry extension: Argo CD has no such rule.
const AnnotationSyncAnyRevision = "ferry.dev/sync-any-revision"

// AllowsAnySyncRevision reports whether the project carries
// AnnotationSyncAnyRevision: "true".
func (p *AppProject) AllowsAnySyncRevision() bool {
	return strings.EqualFold(strings.TrimSpace(p.Metadata.Annotations[AnnotationSyncAnyRevision]), "true")
}
