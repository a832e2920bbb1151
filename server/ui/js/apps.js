// The applications page: every app the user may get, as tiles or a table,
// with sync and health per app and per region, filtered by the URL's
// parameters, and kept up to date by the server's stream.
import { html, memo, useState, useEffect, useMemo } from './html.js';
import { api, watchApps } from './api.js';
import { navigate } from './router.js';
import { key, appURL, regionsOf, syncOf, healthOf, repoOf, filterNames, matches, age, short } from './model.js';

// useApps is the list of apps, updated by the stream.
function useApps() {
  const [apps, setApps] = useState(null);
  const [error, setError] = useState('');
  useEffect(() => {
    const live = new Map();
    // apply answers whether the event changed the list. A stream begins
    // with every app as ADDED: one the list holds as it is keeps its
    // object, so its tile does not render again.
    const apply = (ev) => {
      const k = key(ev.application);
      if (ev.type === 'DELETED') return live.delete(k);
      const old = live.get(k);
      if (ev.type === 'ADDED' && old && JSON.stringify(old) === JSON.stringify(ev.application)) return false;
      live.set(k, ev.application);
      return true;
    };
    // Many changes at once (a push that moves every app) render once a
    // frame, not once each.
    let frame = 0;
    const show = () => { frame = 0; setApps([...live.values()]); };
    // The stream opens once the list is in: its first events are then
    // the views the list just had the server query.
    let stop = () => {};
    let gone = false;
    api('/api/v1/applications').then((list) => {
      if (gone) return;
      for (const a of list.items || []) live.set(key(a), a);
      setApps([...live.values()]);
      stop = watchApps({}, (ev) => {
        if (apply(ev) && !frame) frame = requestAnimationFrame(show);
      });
    }).catch((e) => setError(e.message));
    return () => { gone = true; stop(); cancelAnimationFrame(frame); };
  }, []);
  return [apps, error];
}

function Status({ kind, value }) {
  return html`<span class=${'status ' + kind + ' ' + value.toLowerCase()} title=${kind}>${value}</span>`;
}

function Regions({ app }) {
  return html`<ul class="regions" aria-label="Regions">
    ${regionsOf(app).map((r) => html`<li key=${r.name}>
      <span class="region">${r.name}</span> <${Status} kind="sync" value=${r.sync || 'Unknown'} /> <${Status} kind="health" value=${r.health || 'Unknown'} />
    </li>`)}
  </ul>`;
}

// Tile and Row render again only when their app changed (the stream keeps
// an unchanged app's object), so their ages move with their app.
const Tile = memo(({ app }) => {
  const op = app.status && app.status.operationState;
  return html`<li class="tile">
    <article aria-label=${app.metadata.name}>
      <h2><a href=${appURL(app)}>${app.metadata.name}</a></h2>
      <p><${Status} kind="sync" value=${syncOf(app)} /> <${Status} kind="health" value=${healthOf(app)} /></p>
      <dl>
        <dt>Project</dt><dd>${app.spec.project || 'default'}</dd>
        <dt>Repository</dt><dd class="repo">${repoOf(app)}</dd>
        <dt>Revision</dt><dd>${short(app.status && app.status.sync && app.status.sync.revision)}</dd>
        ${op && html`<dt>Last operation</dt><dd>${op.phase} ${age(op.finishedAt || op.startedAt)}</dd>`}
      </dl>
      <${Regions} app=${app} />
    </article>
  </li>`;
});

const Row = memo(({ app: a }) => {
  const op = a.status && a.status.operationState;
  return html`<tr>
    <td><a href=${appURL(a)}>${a.metadata.name}</a></td><td>${a.spec.project || 'default'}</td>
    <td><${Status} kind="sync" value=${syncOf(a)} /></td><td><${Status} kind="health" value=${healthOf(a)} /></td>
    <td><${Regions} app=${a} /></td><td>${short(a.status && a.status.sync && a.status.sync.revision)}</td>
    <td>${op ? op.phase + ' ' + age(op.finishedAt || op.startedAt) : ''}</td>
  </tr>`;
});

function Table({ apps }) {
  return html`<table class="apps">
    <thead><tr><th>Name</th><th>Project</th><th>Sync</th><th>Health</th><th>Regions</th><th>Revision</th><th>Last operation</th></tr></thead>
    <tbody>${apps.map((a) => html`<${Row} key=${key(a)} app=${a} />`)}</tbody>
  </table>`;
}

// choicesOf are the filters' options the apps give, and a signature of
// them: the filters render again only when their options or the URL move.
function choicesOf(apps) {
  const options = (fn) => [...new Set(apps.flatMap(fn))].filter(Boolean).sort();
  const choices = {
    project: options((a) => [a.spec.project || 'default']),
    sync: ['Synced', 'OutOfSync', 'Unknown'],
    health: ['Healthy', 'Progressing', 'Degraded', 'Suspended', 'Missing', 'Unknown'],
    region: options((a) => regionsOf(a).map((r) => r.name)),
    namespace: options((a) => (a.spec.destinations || [a.spec.destination || {}]).map((d) => d.namespace)),
    repo: options((a) => [repoOf(a)]),
  };
  return { choices, sig: JSON.stringify(choices) };
}

// Filters edits the URL's parameters: a filtered view is a link.
const Filters = memo(({ loc, choices }) => {
  const set = (name, value) => {
    const q = new URLSearchParams(loc.search);
    if (value) q.set(name, value); else q.delete(name);
    navigate(loc.pathname + (q.toString() ? '?' + q : ''), { replace: true });
  };
  const q = loc.searchParams;
  return html`<form class="filters" role="search" onSubmit=${(e) => e.preventDefault()}>
    <label>Search <input type="search" value=${q.get('search') || ''} onInput=${(e) => set('search', e.target.value)} /></label>
    ${Object.entries(choices).map(([name, values]) => html`<label key=${name}>${name[0].toUpperCase() + name.slice(1)}
      <select value=${q.get(name) || ''} onChange=${(e) => set(name, e.target.value)}>
        <option value="">any</option>
        ${values.map((v) => html`<option key=${v} value=${v}>${v}</option>`)}
      </select></label>`)}
    <label>Label <input value=${q.get('label') || ''} placeholder="key=value" onChange=${(e) => set('label', e.target.value)} /></label>
  </form>`;
}, (prev, next) => prev.sig !== next.sig || prev.loc.search !== next.loc.search || prev.loc.pathname !== next.loc.pathname);

function Counts({ apps }) {
  const count = (fn) => {
    const m = {};
    for (const a of apps) m[fn(a)] = (m[fn(a)] || 0) + 1;
    return m;
  };
  const line = (title, c) => html`<p aria-label=${title}>${title}: ${Object.entries(c).sort().map(([k, n]) => html`<span key=${k} class="count">${k} ${n}</span> `)}</p>`;
  return html`<div class="counts">${line('Sync', count(syncOf))}${line('Health', count(healthOf))}</div>`;
}

export function AppsPage({ loc }) {
  const [apps, error] = useApps();
  const filter = useMemo(() => Object.fromEntries(filterNames.map((n) => [n, loc.searchParams.get(n) || ''])), [loc.search]);
  // Keys are namespace/name, DNS labels: plain comparison sorts them.
  const shown = useMemo(() => (apps || []).filter((a) => matches(a, filter)).map((a) => [key(a), a])
    .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)).map(([, a]) => a), [apps, filter]);
  const { choices, sig } = useMemo(() => choicesOf(apps || []), [apps]);
  const view = loc.searchParams.get('view') === 'table' ? 'table' : 'tiles';
  const setView = (v) => {
    const q = new URLSearchParams(loc.search);
    if (v === 'table') q.set('view', 'table'); else q.delete('view');
    navigate(loc.pathname + (q.toString() ? '?' + q : ''), { replace: true });
  };
  if (error) return html`<p role="alert" class="error">${error}</p>`;
  if (!apps) return html`<p class="loading">Loading the applications…</p>`;
  return html`<section aria-label="Applications">
    <h1>Applications <small>${shown.length} of ${apps.length}</small></h1>
    <${Filters} loc=${loc} choices=${choices} sig=${sig} />
    <${Counts} apps=${shown} />
    <p class="views"><button type="button" aria-pressed=${view === 'tiles'} onClick=${() => setView('tiles')}>Tiles</button>
      <button type="button" aria-pressed=${view === 'table'} onClick=${() => setView('table')}>Table</button></p>
    ${view === 'table' ? html`<${Table} apps=${shown} />` : html`<ul class="tiles">${shown.map((a) => html`<${Tile} key=${key(a)} app=${a} />`)}</ul>`}
  </section>`;
}
