// What an app's header says of its source: the repositories, and the
// commit it is at with what that commit says of itself (the first line of
// its message, its author), read from GET …/revisions/{revision}/metadata.
import { html, useState, useEffect } from './html.js';
import { api, appPath } from './api.js';
import { short } from './model.js';

export function Sources({ app }) {
  const srcs = app.spec.sources || [app.spec.source];
  return html`<ul class="sources" aria-label="Sources">${srcs.map((s, i) => html`<li key=${i}>
    <span class="repo">${s.repoURL}</span> ${s.path && html`<span>path ${s.path}</span>`} ${s.chart && html`<span>chart ${s.chart}</span>`}
    <span>at ${s.targetRevision || 'HEAD'}</span></li>`)}</ul>`;
}

// synced is the revision the app is at and the index of its source: the
// revision of a single-source app, the first Git source's of a
// multi-source one; git says whether it is a commit (a chart's version is
// not).
function synced(app) {
  const sync = app.status.sync || {};
  if (!app.spec.sources) return { rev: sync.revision, git: !app.spec.source.chart };
  const index = app.spec.sources.findIndex((s, i) => !s.chart && (sync.revisions || [])[i]);
  return index < 0 ? { rev: sync.revision, git: false } : { rev: sync.revisions[index], index, git: true };
}

function useMetadata(app, rev, index, git) {
  const [md, setMD] = useState(null);
  useEffect(() => {
    setMD(null);
    if (!rev || !git) return undefined;
    let live = true;
    api(appPath(app, '/revisions/' + encodeURIComponent(rev) + '/metadata', { sourceIndex: index }))
      .then((m) => live && setMD(m)).catch(() => {});
    return () => { live = false; };
  }, [app.metadata.namespace, app.metadata.name, rev, index, git]);
  return md;
}

export function Revision({ app }) {
  const { rev, index, git } = synced(app);
  const md = useMetadata(app, rev, index, git);
  const sync = app.status.sync || {};
  const shown = app.spec.sources && sync.revisions ? sync.revisions.map(short).join(', ') : short(sync.revision);
  const subject = md && (md.message || '').split('\n')[0];
  return html`<span class="revision">revision ${shown}${md && html` <span class="commit" aria-label="Commit"
    title=${md.message + (md.date ? '\n' + md.date : '')}>${subject} · ${md.author}${(md.tags || []).length ? ' · ' + md.tags.join(', ') : ''}</span>`}</span>`;
}
