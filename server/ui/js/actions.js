// A node's resource actions: the built-in restart and argocd-cm's Lua
// actions, each a button when the user may run it, confirmed in a dialog.
import { html, useState, useEffect } from './html.js';
import { api, appPath, canI } from './api.js';
import { nodeName } from './tree.js';
import { Dialog } from './dialogs.js';

export function ResourceActions({ app, node }) {
  const [actions, setActions] = useState([]);
  const [asked, setAsked] = useState(null);
  const [result, setResult] = useState('');
  useEffect(() => {
    let live = true;
    const q = { region: node.region, namespace: node.namespace || '', resourceName: node.name, kind: node.kind, group: node.group || '' };
    const object = (app.spec.project || 'default') + '/' + app.metadata.name;
    api(appPath(app, '/resource/actions', q)).then(async (r) => {
      const all = r.actions || [];
      const allowed = await Promise.all(all.map((a) => canI('applications', `action/${node.group || ''}/${node.kind}/${a.name}`, object)));
      if (live) setActions(all.filter((_, i) => allowed[i]));
    }).catch(() => live && setActions([]));
    return () => { live = false; };
  }, [node.uid]);
  if (!actions.length && !result) return null;
  const run = async (name) => {
    const body = { action: name, kind: node.kind, group: node.group || '', namespace: node.namespace || '', resourceName: node.name };
    const r = await api(appPath(app, '/resource/actions/v2', { region: node.region }), { method: 'POST', body });
    setResult((r.results || []).map((x) => `${x.region}: ${(x.done || []).join(', ')}`).join('; ') || `${name}: done`);
  };
  return html`<div class="resource-actions" aria-label="Resource actions">
    ${actions.map((a) => html`<button key=${a.name} type="button" disabled=${a.disabled} onClick=${() => setAsked(a.name)}>${a.name}</button>`)}
    ${result && html`<p role="status">${result}</p>`}
    ${asked && html`<${Dialog} title=${`Run ${asked} on ${nodeName(node)}`} confirm="Run" onClose=${() => setAsked(null)} onConfirm=${() => run(asked)} />`}
  </div>`;
}
