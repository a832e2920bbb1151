// The panel of a selected node: its live manifest, its desired manifest
// and the diff of the two (the app's own objects), its events, and for a
// Pod its logs, streamed, with a choice of container.
import { html, useState, useEffect } from './html.js';
import { api, appPath } from './api.js';
import { nodeName } from './tree.js';
import { ResourceActions } from './actions.js';

const pretty = (text) => {
  if (!text || text === 'null') return '';
  try { return JSON.stringify(JSON.parse(text), null, 2); } catch { return text; }
};

function useLoad(load, deps) {
  const [state, setState] = useState({ loading: true });
  useEffect(() => {
    let live = true;
    setState({ loading: true });
    load().then((data) => live && setState({ data }), (e) => live && setState({ error: e.message }));
    return () => { live = false; };
  }, deps);
  return state;
}

function Loaded({ state, children }) {
  if (state.loading) return html`<p class="loading">Loading…</p>`;
  if (state.error) return html`<p role="alert" class="error">${state.error}</p>`;
  return children(state.data);
}

// objectQuery names node as the resource paths take it.
const objectQuery = (node) => ({ region: node.region, namespace: node.namespace || '', resourceName: node.name, kind: node.kind, group: node.group || '' });

function Live({ app, node }) {
  const state = useLoad(() => api(appPath(app, '/resource', objectQuery(node))), [node.uid, node.resourceVersion]);
  return html`<${Loaded} state=${state}>${(d) => html`<pre aria-label="Live manifest">${pretty(d.manifest)}</pre>`}<//>`;
}

function Managed({ app, node, show }) {
  const query = { region: node.region, kind: node.kind, name: node.name, group: node.group || '', namespace: node.namespace || '' };
  const state = useLoad(() => api(appPath(app, '/managed-resources', query)),
    [node.uid, node.resourceVersion, app.status.sync && app.status.sync.revision]);
  return html`<${Loaded} state=${state}>${(d) => {
    const item = (d.items || [])[0];
    if (!item) return html`<p>Git does not have this object: it is owned by another of the app's objects.</p>`;
    if (show === 'desired') return html`<pre aria-label="Desired manifest">${pretty(item.targetState) || 'No longer desired: a sync with prune deletes it.'}</pre>`;
    if (!item.modified) return html`<p aria-label="Diff">No difference: the object is as Git wants it.</p>`;
    return html`<div aria-label="Diff">
      ${item.message && html`<p>${item.message}</p>`}
      <pre class="diff">${(item.unifiedDiff || '').split('\n').map((line) => html`<span class=${line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : ''}>${line}\n</span>`)}</pre>
    </div>`;
  }}<//>`;
}

function Events({ app, node }) {
  const q = { resourceName: node.name, resourceNamespace: node.namespace || '', resourceKind: node.kind, resourceGroup: node.group || '', region: node.region };
  const state = useLoad(() => api(appPath(app, '/events', q)), [node.uid]);
  return html`<${Loaded} state=${state}>${(d) => (d.items || []).length === 0 ? html`<p>No events.</p>` : html`<table aria-label="Events">
    <thead><tr><th>Reason</th><th>Message</th><th>Count</th><th>Last seen</th></tr></thead>
    <tbody>${d.items.map((ev) => html`<tr key=${ev.metadata.uid}><td>${ev.reason}</td><td>${ev.message}</td><td>${ev.count}</td><td>${ev.lastTimestamp || ev.eventTime}</td></tr>`)}</tbody>
  </table>`}<//>`;
}

// Logs streams the pod's logs (the server's newline-delimited JSON).
function Logs({ app, node }) {
  const pod = useLoad(() => api(appPath(app, '/resource', objectQuery(node))), [node.uid]);
  let containers = [];
  try { containers = JSON.parse(pod.data.manifest).spec.containers.map((c) => c.name); } catch { containers = []; }
  const [container, setContainer] = useState('');
  const [lines, setLines] = useState([]);
  const [error, setError] = useState('');
  useEffect(() => {
    const ctl = new AbortController();
    setLines([]);
    setError('');
    const q = { podName: node.name, namespace: node.namespace || '', region: node.region, follow: 'true', tailLines: '500', container: container || undefined };
    (async () => {
      const resp = await fetch(appPath(app, '/logs', q), { signal: ctl.signal });
      if (!resp.ok) { setError((await resp.json().catch(() => ({}))).message || resp.statusText); return; }
      const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
      let rest = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const parts = (rest + value).split('\n');
        rest = parts.pop();
        const got = parts.filter(Boolean).map((p) => JSON.parse(p)).filter((m) => m.result && !m.result.last)
          .map((m) => m.result.containerName + ': ' + m.result.content);
        if (got.length) setLines((old) => [...old, ...got].slice(-2000));
      }
    })().catch((e) => { if (e.name !== 'AbortError') setError(e.message); });
    return () => ctl.abort();
  }, [node.uid, container]);
  return html`<div>
    <label>Container <select value=${container} onChange=${(e) => setContainer(e.target.value)}>
      <option value="">all</option>${containers.map((c) => html`<option key=${c} value=${c}>${c}</option>`)}
    </select></label>
    ${error && html`<p role="alert" class="error">${error}</p>`}
    <pre aria-label="Logs" class="logs">${lines.join('\n')}</pre>
  </div>`;
}

export function Panel({ app, node, managed, onClose }) {
  const tabs = [['live', 'Live manifest']];
  if (managed) tabs.push(['desired', 'Desired manifest'], ['diff', 'Diff']);
  tabs.push(['events', 'Events']);
  if (node.kind === 'Pod' && !node.group) tabs.push(['logs', 'Logs']);
  const [tab, setTab] = useState('live');
  const current = tabs.some(([t]) => t === tab) ? tab : 'live';
  return html`<aside class="panel" aria-label=${nodeName(node)}>
    <header><h2>${nodeName(node)} <small>${node.region}${node.namespace ? ' · ' + node.namespace : ''}</small></h2>
      <button type="button" aria-label="Close" onClick=${onClose}>×</button></header>
    <${ResourceActions} app=${app} node=${node} />
    <div role="tablist">${tabs.map(([t, label]) => html`<button key=${t} role="tab" aria-selected=${current === t} onClick=${() => setTab(t)}>${label}</button>`)}</div>
    <div role="tabpanel">
      ${current === 'live' && html`<${Live} app=${app} node=${node} />`}
      ${(current === 'desired' || current === 'diff') && html`<${Managed} app=${app} node=${node} show=${current} />`}
      ${current === 'events' && html`<${Events} app=${app} node=${node} />`}
      ${current === 'logs' && html`<${Logs} app=${app} node=${node} />`}
    </div>
  </aside>`;
}
