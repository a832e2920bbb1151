package contract

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
)

// ferry-server reads no Git: it asks the control workers, which hold the
// repository credentials and clones, for what a commit says of itself
// (Argo CD's RevisionMetadata) through a short workflow of type
// RevisionMetadataWorkflow that runs ActivityRevisionMetadata.
const (
	// RevisionMetadataWorkflow answers a commit's author, date, message
	// and tags, read on the control side.
	RevisionMetadataWorkflow = "RevisionMetadata"
	// ActivityRevisionMetadata checks the repository against the app's
	// project and reads the commit from the worker's clone of it.
	ActivityRevisionMetadata = "RevisionMetadata"
	// ErrRevisionNotFound: the revision names no branch, tag or commit of
	// the repository (activity error type, non-retryable).
	ErrRevisionNotFound = "RevisionNotFound"
)

// RevisionMetadataTimeout bounds the activity's attempt: a fetch of the
// repository when the commit is not in the worker's clone yet.
const RevisionMetadataTimeout = 2 * time.Minute

// RevisionMetadataWorkflowID is revision-metadata/REVISION-REPO, REPO the
// first 12 hex digits of the SHA-256 of the repository URL: one workflow
// per repository and revision (a SHA, or a ref while it points there),
// which concurrent asks share.
func RevisionMetadataWorkflowID(repoURL, revision string) string {
	sum := sha256.Sum256([]byte(strings.TrimSpace(repoURL)))
	return "revision-metadata/" + revision + "-" + hex.EncodeToString(sum[:6])
}

// RevisionMetadataInput asks for one revision of an app's repository.
type RevisionMetadataInput struct {
	// App names the app that asks, for errors.
	App string `json:"app"`
	// Project is the app's project: the repository must be one its
	// sourceRepos allow, as for a render.
	Project string `json:"project,omitempty"`
	// RepoURL is the app's source repository (of spec.source, or of the
	// spec.sources entry asked for).
	RepoURL string `json:"repoURL"`
	// Revision is a full or short SHA, a branch, a tag or a ref.
	Revision string `json:"revision"`
}

// RevisionMetadataResult is Argo CD's RevisionMetadata of a commit, with
// the SHA the revision resolved to: no file of the commit, no credential.
type RevisionMetadataResult struct {
	// SHA is the commit's full SHA, which the revision resolved to.
	SHA string `json:"sha"`
	// Author is "Name <email>".
	Author string `json:"author"`
	// Date is when the author wrote the commit.
	Date time.Time `json:"date"`
	// Tags are the tags at the commit, sorted.
	Tags []string `json:"tags,omitempty"`
	// Message is the commit's message, cut at 16 KiB.
	Message string `json:"message"`
}
