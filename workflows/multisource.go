package workflows

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// revisionSep joins the revisions of a multi-source app's sources into the
// one revision (Target.SHA, status.sync.revision) the rest of the workflow
// compares: a change in any source is a new revision. Neither commit SHAs
// nor semver versions hold a comma.
const revisionSep = ","

// targetSources is target for a multi-source app: every source of srcs
// (nil: spec.sources) at its revision resolved (in parallel, each through the refs or index cache its
// repository shares), and the sources rendered together when any of them
// moved or the spec changed. revision is empty (or HEAD, what a sync
// without --revision asks) for the revisions the sources name, or one
// revision per source joined by commas: a rollback's, or a sync's
// --revision R1,R2.
func (s *appState) targetSources(ctx workflow.Context, srcs []app.Source, revision string, fresh, hard, requested bool) (contract.Target, error) {
	specDigest, restored := s.app.SpecDigest(), srcs != nil
	if restored {
		specDigest = s.specDigestWithSources(srcs)
	} else {
		srcs = s.app.Spec.Sources
	}
	wanted := make([]string, len(srcs))
	switch pinned := strings.Split(revision, revisionSep); {
	case revision == "" || revision == app.DefaultTargetRevision:
		for i := range srcs {
			wanted[i] = srcs[i].TargetRevision
		}
	case len(pinned) == len(srcs):
		copy(wanted, pinned)
	default:
		return contract.Target{}, fmt.Errorf("app %q has %d sources: revision %q names %d; give one revision per source, joined by commas, or none for the revisions spec.sources names",
			s.app.Metadata.Name, len(srcs), revision, len(pinned))
	}
	futures := make([]workflow.Future, len(srcs))
	for i, src := range srcs {
		rev := wanted[i]
		if rev == "" {
			rev = app.DefaultTargetRevision
		}
		wanted[i] = rev
		futures[i] = workflow.ExecuteLocalActivity(resolveCtx(ctx, resolveSummary(src.RepoURL, rev)), contract.ActivityResolveRevision,
			contract.ResolveInput{RepoURL: src.RepoURL, TargetRevision: rev, Chart: src.Chart, Fresh: fresh, MaxAge: s.app.PollInterval(),
				Requested: s.requestedRevision(requested, src, rev)})
	}
	resolved := make([]contract.SourceRevision, len(srcs))
	revs := make([]string, len(srcs))
	var errs []string
	for i, f := range futures {
		var out contract.ResolveResult
		if err := f.Get(ctx, &out); err != nil {
			errs = append(errs, fmt.Sprintf("resolve revision %q of spec.sources[%d] (%s): %v", wanted[i], i, srcs[i].RepoURL, err))
			continue
		}
		resolved[i], revs[i] = contract.SourceRevision{Source: srcs[i], Revision: out.SHA}, out.SHA
	}
	if len(errs) > 0 {
		return contract.Target{}, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	sha := strings.Join(revs, revisionSep)
	if r := s.Rendered; r != nil && !hard && r.commit() == sha && r.SpecDigest == specDigest && r.RemoteBases == 0 {
		return s.targetOf(r), nil
	}
	var out contract.RenderResult
	err := workflow.ExecuteActivity(renderCtx(ctx, fmt.Sprintf("Render %d sources", len(srcs))), contract.ActivityRender,
		contract.RenderInput{App: s.app.Metadata.Name, Sources: resolved, SHA: sha, Namespace: s.renderNamespace(), Hard: hard, Fresh: fresh,
			Project: s.app.ProjectOf(), Unless: s.pathsCheck(srcs, hard, specDigest)}).Get(ctx, &out)
	if err != nil {
		return contract.Target{}, fmt.Errorf("render the %d sources at %s: %w", len(srcs), shortRevisions(sha), err)
	}
	if t, ok := s.spared(out, sha); ok {
		return t, nil
	}
	s.Rendered = &rendered{SHA: sha, SpecDigest: specDigest, Digest: out.Digest, Count: out.Count, Children: out.Children,
		Hooks: out.Hooks, RemoteBases: out.RemoteBases}
	s.noteRender(out)
	if restored && specDigest != s.app.SpecDigest() {
		s.Rendered.Sources = srcs
	}
	return s.targetOf(s.Rendered), nil
}

// sourcesAt pairs the sources of a rendered set (spec.sources, or a
// rollback's) with its revisions.
func (s *appState) sourcesAt(r *rendered) []contract.SourceRevision {
	if !s.app.IsMultiSource() {
		return nil
	}
	srcs := s.app.Spec.Sources
	if r.Sources != nil {
		srcs = r.Sources
	}
	revs := strings.Split(r.SHA, revisionSep)
	out := make([]contract.SourceRevision, len(srcs))
	for i, src := range srcs {
		out[i].Source = src
		if i < len(revs) {
			out[i].Revision = revs[i]
		}
	}
	return out
}

// revisionsOf splits a multi-source app's revision into one per source
// (status.sync.revisions); nil for an app of one source.
func (s *appState) revisionsOf(sha string) []string {
	if !s.app.IsMultiSource() || sha == "" {
		return nil
	}
	return strings.Split(sha, revisionSep)
}

// historyEntry is a deployment of target, with every source of a
// multi-source app and its revision.
func historyEntry(target contract.Target, deployed time.Time) app.HistoryEntry {
	e := app.HistoryEntry{Revision: target.Commit(), DeployedAt: deployed, Source: target.Source, Local: target.Local}
	if len(target.Sources) > 0 {
		e.Revisions, e.Sources = target.Revisions(), target.SourceList()
	}
	return e
}

// sourcesDetails writes a multi-source app's sources and their revisions
// for the Web UI's details.
func (s *appState) sourcesDetails(b *strings.Builder) {
	revs := s.revisionsOf(s.Status.Sync.Revision)
	b.WriteString("| source | revision |\n|---|---|\n")
	for i, src := range s.app.Spec.Sources {
		rev := cmp.Or(src.TargetRevision, app.DefaultTargetRevision)
		if i < len(revs) {
			rev = short(revs[i])
		}
		fmt.Fprintf(b, "| %s | `%s` |\n", src.SourceLabel(), rev)
	}
	b.WriteString("\n")
}

func shortRevisions(sha string) string {
	parts := strings.Split(sha, revisionSep)
	for i, p := range parts {
		parts[i] = short(p)
	}
	return strings.Join(parts, revisionSep)
}
