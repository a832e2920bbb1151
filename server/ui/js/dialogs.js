// The confirmations of an app's actions, each a modal <dialog> with Argo
// CD's options; the answer of the server (or its refusal) shows in it.
import { html, useState, useRef, useEffect } from './html.js';
import { api, appPath } from './api.js';

export function Dialog({ title, onClose, onConfirm, confirm, children }) {
  const ref = useRef(null);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  useEffect(() => { ref.current.showModal(); }, []);
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      await onConfirm(new FormData(e.target));
      onClose();
    } catch (err) {
      setError(err.message);
    } finally {
      setBusy(false);
    }
  };
  return html`<dialog ref=${ref} aria-label=${title} onClose=${onClose}>
    <form onSubmit=${submit}>
      <h2>${title}</h2>
      ${children}
      ${error && html`<p role="alert" class="error">${error}</p>`}
      <p class="buttons"><button type="submit" disabled=${busy}>${confirm}</button>
        <button type="button" onClick=${() => ref.current.close()}>Cancel</button></p>
    </form>
  </dialog>`;
}

const checked = (form, name) => form.get(name) === 'on';

// resourceKey names a resource of the app once, whatever its regions.
const resourceKey = (r) => [r.group || '', r.kind, r.namespace || '', r.name].join('/');

// The dialogs' checkboxes are held in state: the app's updates re-render a
// dialog while it is open, and must not undo what the user ticked.
export function SyncDialog({ app, onClose }) {
  const resources = (app.status.resources || []).filter((r) => r.kind !== 'Application');
  const seen = new Set();
  const unique = resources.filter((r) => { const k = resourceKey(r); return !seen.has(k) && seen.add(k); });
  const [unpicked, setUnpicked] = useState(() => new Set());
  const toggle = (k, on) => setUnpicked((old) => { const next = new Set(old); if (on) next.delete(k); else next.add(k); return next; });
  const confirm = async (form) => {
    const body = { revision: form.get('revision') || '', prune: checked(form, 'prune'), dryRun: checked(form, 'dryRun') };
    if (checked(form, 'force')) body.strategy = { apply: { force: true } };
    if (checked(form, 'applyOutOfSyncOnly')) body.syncOptions = { items: ['ApplyOutOfSyncOnly=true'] };
    const picked = form.getAll('resource');
    if (picked.length && picked.length < unique.length) {
      body.resources = picked.map((k) => { const [group, kind, namespace, name] = k.split('/'); return { group, kind, namespace, name }; });
    }
    await api(appPath(app, '/sync'), { method: 'POST', body });
  };
  return html`<${Dialog} title=${'Sync ' + app.metadata.name} confirm="Synchronize" onClose=${onClose} onConfirm=${confirm}>
    <label>Revision <input name="revision" placeholder=${(app.spec.source && app.spec.source.targetRevision) || 'HEAD'} /></label>
    <fieldset><legend>Options</legend>
      <label><input type="checkbox" name="prune" /> Prune</label>
      <label><input type="checkbox" name="dryRun" /> Dry run</label>
      <label><input type="checkbox" name="force" /> Force</label>
      <label><input type="checkbox" name="applyOutOfSyncOnly" /> Apply out of sync only</label>
    </fieldset>
    <fieldset class="resources"><legend>Resources</legend>
      ${unique.map((r) => { const k = resourceKey(r);
        return html`<label key=${k}><input type="checkbox" name="resource" value=${k} checked=${!unpicked.has(k)}
          onChange=${(e) => toggle(k, e.target.checked)} /> ${r.kind}/${r.name}</label>`; })}
    </fieldset>
  <//>`;
}

export function DeleteDialog({ app, onClose, onDeleted }) {
  const [cascade, setCascade] = useState(true);
  const confirm = async (form) => {
    if (form.get('confirm') !== app.metadata.name) throw new Error(`type the app's name, ${app.metadata.name}, to delete it`);
    await api(appPath(app, '', { cascade: cascade ? 'true' : 'false' }), { method: 'DELETE' });
    onDeleted();
  };
  return html`<${Dialog} title=${'Delete ' + app.metadata.name} confirm="Delete" onClose=${onClose} onConfirm=${confirm}>
    <label><input type="checkbox" name="cascade" checked=${cascade} onChange=${(e) => setCascade(e.target.checked)} /> Cascade: delete the app's resources too</label>
    <label>Type the app's name to confirm <input name="confirm" autocomplete="off" /></label>
  <//>`;
}

export function RollbackDialog({ app, onClose }) {
  const history = [...((app.status && app.status.history) || [])].reverse();
  const confirm = async (form) => {
    if (!form.get('id')) throw new Error('choose the history entry to roll back to');
    await api(appPath(app, '/rollback'), { method: 'POST', body: { id: form.get('id'), prune: checked(form, 'prune') } });
  };
  return html`<${Dialog} title=${'Roll back ' + app.metadata.name} confirm="Roll back" onClose=${onClose} onConfirm=${confirm}>
    <fieldset><legend>History</legend>
      ${history.length === 0 && html`<p>No history yet.</p>`}
      ${history.map((h) => html`<label key=${h.id}><input type="radio" name="id" value=${h.id} /> #${h.id} ${(h.revision || '').slice(0, 7)} deployed ${h.deployedAt}</label>`)}
    </fieldset>
    <label><input type="checkbox" name="prune" /> Prune</label>
  <//>`;
}
