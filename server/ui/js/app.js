// One app's page: its sources, revision (revision.js) and operation, sync and health per
// region, its resource tree per region, the panel of a selected node, and
// its actions as buttons the user's rights allow.
import { html, useState, useEffect, useMemo, useRef, useCallback } from './html.js';
import { api, appPath, canI, watchApps, settings, workflowURL } from './api.js';
import { navigate } from './router.js';
import { key, appURL, regionsOf, syncOf, healthOf, age, short } from './model.js';
import { Tree, nodeKey } from './tree.js';
import { Panel } from './panel.js';
import { SyncDialog, DeleteDialog, RollbackDialog } from './dialogs.js';
import { Sources, Revision } from './revision.js';

// useApp is the app, kept up to date by the stream; null while loading,
// and {deleted: true} once it is gone.
function useApp(namespace, name) {
  const [app, setApp] = useState(null);
  const [error, setError] = useState('');
  useEffect(() => {
    const self = { metadata: { namespace, name } };
    let stop = () => {};
    let gone = false;
    api(appPath(self)).then((a) => {
      if (gone) return;
      self.metadata.namespace = a.metadata.namespace; // /applications/NAME: now the app's own URL
      if (!namespace) history.replaceState(null, '', appURL(a));
      setApp(a);
      // The stream of this app alone, from now on.
      // Not named before the stream's BOOKMARK: deleted since it was read.
      let named = false;
      stop = watchApps({ name: a.metadata.name, appNamespace: a.metadata.namespace }, (ev) => {
        if (ev.type === 'OPEN') { named = false; return; }
        if (ev.type === 'BOOKMARK') { if (!named) setApp({ deleted: true }); return; }
        if (key(ev.application) !== key(self)) return;
        named = true;
        if (ev.type === 'DELETED') setApp({ deleted: true });
        else setApp(ev.application);
      });
    }).catch((e) => setError(e.message));
    return () => { gone = true; stop(); };
  }, [namespace, name]);
  return [app, error, setApp];
}

// useTree is the app's resource tree: read at once, beside the app
// itself, then again when the app's status moves.
function useTree(namespace, name, app) {
  const [nodes, setNodes] = useState(null);
  const loaded = useRef(false); // the app has loaded: the first read stands for it as it did
  const s = (app && app.status) || {};
  const op = s.operationState || {};
  const moved = app && [s.sync && s.sync.revision, s.sync && s.sync.status, s.health && s.health.status, op.phase, op.startedAt,
    (s.resources || []).length].join('|');
  useEffect(() => {
    api(appPath({ metadata: { namespace, name } }, '/resource-tree')).then((tree) => setNodes(tree.nodes || [])).catch(() => {});
  }, [namespace, name]);
  useEffect(() => {
    if (!app || app.deleted) return;
    if (!loaded.current) {
      loaded.current = true;
      return;
    }
    const t = setTimeout(() => {
      api(appPath(app, '/resource-tree')).then((tree) => setNodes(tree.nodes || [])).catch(() => {});
    }, nodes ? 300 : 0);
    return () => clearTimeout(t);
  }, [moved]);
  return nodes;
}

// useRights are the buttons the user may have on the app.
function useRights(app) {
  const [rights, setRights] = useState({});
  useEffect(() => {
    if (!app || app.deleted) return;
    const object = (app.spec.project || 'default') + '/' + app.metadata.name;
    Promise.all(['sync', 'delete'].map((a) => canI('applications', a, object))).then(([sync, del]) => setRights({ sync, delete: del }));
  }, [app && app.metadata && app.metadata.name]);
  return rights;
}

// useWorkflowURL is the app's workflow in the Temporal Web UI, or ''.
function useWorkflowURL(app) {
  const [url, setURL] = useState('');
  useEffect(() => { if (app && !app.deleted) settings().then((s) => setURL(workflowURL(s, app))); }, [app && app.metadata && app.metadata.name]);
  return url;
}

function Operation({ op, workflow }) {
  if (!op) return null;
  const by = op.operation && op.operation.initiatedBy && op.operation.initiatedBy.username;
  return html`<p class="operation" aria-label="Operation">
    <span class=${'status phase ' + (op.phase || '').toLowerCase()}>${op.phase}</span> ${op.message}
    ${by && html` · by ${by}`} · ${age(op.startedAt)} ago ${op.revision && html` · ${short(op.revision)}`}
    ${workflow && html` · <a href=${workflow} target="_blank" rel="noopener">its steps in Temporal</a>`}
  </p>`;
}

// byNode keys the app's status.resources and its last operation's hook
// results by tree node (nodeKey).
function byNode(app) {
  const resources = new Map(), hooks = new Map();
  if (!app || app.deleted) return [resources, hooks];
  for (const r of app.status.resources || []) resources.set(nodeKey(r), r);
  const op = app.status.operationState || {};
  for (const r of (op.syncResult && op.syncResult.resources) || op.results || []) if (r.hookType) hooks.set(nodeKey(r), r);
  return [resources, hooks];
}

export function AppPage({ namespace, name }) {
  const [app, error, setApp] = useApp(namespace, name);
  const nodes = useTree(namespace, name, app);
  const rights = useRights(app);
  const workflow = useWorkflowURL(app);
  const [selected, setSelected] = useState(null);
  const [dialog, setDialog] = useState(null);
  const [notice, setNotice] = useState('');
  const byRegion = useMemo(() => {
    const m = new Map();
    for (const n of nodes || []) {
      if (!m.has(n.region)) m.set(n.region, []);
      m.get(n.region).push(n);
    }
    return m;
  }, [nodes]);
  const [resources, hooks] = useMemo(() => byNode(app), [app]);
  const onSelect = useCallback((n) => setSelected(nodeKey(n)), []);
  if (error) return html`<p role="alert" class="error">${error}</p>`;
  if (!app) return html`<p class="loading">Loading ${name}…</p>`;
  if (app.deleted) return html`<p role="status">Application ${name} was deleted. <a href="/applications">All applications</a></p>`;
  const statusOf = (n) => resources.get(nodeKey(n));
  const hookOf = (n) => hooks.get(nodeKey(n));
  const refresh = (hard) => api(appPath(app, '', { refresh: hard ? 'hard' : 'normal' })).then((a) => { setApp(a); setNotice(hard ? 'Hard refreshed' : 'Refreshed'); })
    .catch((e) => setNotice(e.message));
  const terminate = () => api(appPath(app, '/operation'), { method: 'DELETE' }).then(() => setNotice('Operation terminated')).catch((e) => setNotice(e.message));
  const op = app.status.operationState;
  const running = op && op.phase === 'Running';
  const selNode = selected && (nodes || []).find((n) => nodeKey(n) === selected);
  return html`<section class="app" aria-label=${'Application ' + app.metadata.name}>
    <header class="app-header">
      <h1>${app.metadata.name} <small>${app.spec.project || 'default'}</small></h1>
      ${workflow && html`<p><a href=${workflow} target="_blank" rel="noopener">Workflow in Temporal</a></p>`}
      <p><span class=${'status sync ' + syncOf(app).toLowerCase()}>${syncOf(app)}</span>
        <span class=${'status health ' + healthOf(app).toLowerCase()}>${healthOf(app)}</span>
        <${Revision} app=${app} /></p>
      <${Sources} app=${app} />
      <ul class="regions" aria-label="Regions">${regionsOf(app).map((r) => html`<li key=${r.name}>${r.name}
        <span class=${'status sync ' + (r.sync || '').toLowerCase()}>${r.sync}</span>
        <span class=${'status health ' + (r.health || '').toLowerCase()}>${r.health}</span>${r.message && html` ${r.message}`}</li>`)}</ul>
      <${Operation} op=${op} workflow=${workflow} />
      <p class="actions">
        ${rights.sync && html`<button type="button" onClick=${() => setDialog('sync')}>Sync</button>`}
        <button type="button" onClick=${() => refresh(false)}>Refresh</button>
        <button type="button" onClick=${() => refresh(true)}>Hard refresh</button>
        ${rights.sync && html`<button type="button" onClick=${() => setDialog('rollback')}>Rollback</button>`}
        ${rights.sync && running && html`<button type="button" onClick=${terminate}>Terminate</button>`}
        ${rights.delete && html`<button type="button" onClick=${() => setDialog('delete')}>Delete</button>`}
      </p>
      ${notice && html`<p role="status">${notice}</p>`}
    </header>
    ${dialog === 'sync' && html`<${SyncDialog} app=${app} onClose=${() => setDialog(null)} />`}
    ${dialog === 'rollback' && html`<${RollbackDialog} app=${app} onClose=${() => setDialog(null)} />`}
    ${dialog === 'delete' && html`<${DeleteDialog} app=${app} onClose=${() => setDialog(null)} onDeleted=${() => navigate('/applications')} />`}
    <div class="trees">
      ${nodes === null && html`<p class="loading">Loading the resource tree…</p>`}
      ${regionsOf(app).map((r) => html`<section key=${r.name} aria-label=${'Region ' + r.name}>
        <h2>${r.name}</h2>
        <${Tree} region=${r.name} nodes=${byRegion.get(r.name) || []} selected=${selected} onSelect=${onSelect} statusOf=${statusOf} hookOf=${hookOf} />
      </section>`)}
    </div>
    ${selNode && html`<${Panel} key=${selected} app=${app} node=${selNode} managed=${!!statusOf(selNode)} onClose=${() => setSelected(null)} />`}
  </section>`;
}
