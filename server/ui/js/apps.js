// The applications page: every app the user may get, as tiles or a table,
// with sync and health per app and per region, filtered by the URL's
// parameters, and kept up to date by the server's stream.
import { html, memo, useState, useEffect, useMemo } from './html.js';
import { api, watchApps } from './api.js';
import { setParams } from './router.js';
import { pageOf, pageSizes, Pager } from './pager.js';
import { key, appURL, regionsOf, syncOf, healthOf, repoOf, filterNames, matches, age, short } from './model.js';

// useApps is the list of apps, updated by the stream.
function useApps() {
  const [apps, setApps] = useState(null);
  const [error, setError] = useState('');
  useEffect(() => {
    const live = new Map();
    // named holds the apps the stream named since it (re)opened, until
    // its BOOKMARK: an app the list held that the stream did not name by
    // then was deleted between the two, and leaves the list.
    let named = new Set();
    // apply answers whether the event changed the list. A stream begins
    // with every app as ADDED: one the list holds as it is keeps its
    // object, so its tile does not render again.
    const apply = (ev) => {
      if (ev.type === 'OPEN') { named = new Set(); return false; }
      if (ev.type === 'BOOKMARK') {
        const gone = [...live.keys()].filter((k) => !named.has(k));
        for (const k of gone) live.delete(k);
        named = null;
        return gone.length > 0;
      }
      const k = key(ev.application);
      if (named) named.add(k);
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

// status and regions are plain functions, not components: a thousand
// tiles cost a thousand component instances, not seven thousand.
function status(kind, value) {
  return html`<span class=${'status ' + kind + ' ' + value.toLowerCase()} title=${kind}>${value}</span>`;
}

function regions(app) {
  return html`<ul class="regions" aria-label="Regions">
    ${regionsOf(app).map((r) => html`<li key=${r.name}>
      <span class="region">${r.name}</span> ${status('sync', r.sync || 'Unknown')} ${status('health', r.health || 'Unknown')}
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
      <p>${status('sync', syncOf(app))} ${status('health', healthOf(app))}</p>
      <dl>
        <dt>Project</dt><dd>${app.spec.project || 'default'}</dd>
        <dt>Repository</dt><dd class="repo">${repoOf(app)}</dd>
        <dt>Revision</dt><dd>${short(app.status && app.status.sync && app.status.sync.revision)}</dd>
        ${op && html`<dt>Last operation</dt><dd>${op.phase} ${age(op.finishedAt || op.startedAt)}</dd>`}
      </dl>
      ${regions(app)}
    </article>
  </li>`;
});

const Row = memo(({ app: a }) => {
  const op = a.status && a.status.operationState;
  return html`<tr>
    <td><a href=${appURL(a)}>${a.metadata.name}</a></td><td>${a.spec.project || 'default'}</td>
    <td>${status('sync', syncOf(a))}</td><td>${status('health', healthOf(a))}</td>
    <td>${regions(a)}</td><td>${short(a.status && a.status.sync && a.status.sync.revision)}</td>
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
// One pass over the apps: it runs whenever an app changed.
function choicesOf(apps) {
  const project = new Set(), region = new Set(), namespace = new Set(), repo = new Set();
  for (const a of apps) {
    project.add(a.spec.project || 'default');
    for (const r of Object.keys((a.status && a.status.regions) || {})) region.add(r);
    for (const d of a.spec.destinations || [a.spec.destination || {}]) if (d.namespace) namespace.add(d.namespace);
    if (repoOf(a)) repo.add(repoOf(a));
  }
  const sorted = (set) => [...set].sort();
  const choices = {
    project: sorted(project),
    sync: ['Synced', 'OutOfSync', 'Unknown'],
    health: ['Healthy', 'Progressing', 'Degraded', 'Suspended', 'Missing', 'Unknown'],
    region: sorted(region),
    namespace: sorted(namespace),
    repo: sorted(repo),
  };
  return { choices, sig: JSON.stringify(choices) };
}

// Filters edits the URL's parameters: a filtered view is a link.
const Filters = memo(({ loc, choices }) => {
  // A filter that changes starts the list again at its first page.
  const set = (name, value) => setParams(loc, { [name]: value, page: '' });
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
  const filtered = useMemo(() => filterNames.some((n) => filter[n]), [filter]);
  const shown = useMemo(() => (apps || []).filter((a) => !filtered || matches(a, filter)).map((a) => [key(a), a])
    .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)).map(([, a]) => a), [apps, filter]);
  const { choices, sig } = useMemo(() => choicesOf(apps || []), [apps]);
  const view = loc.searchParams.get('view') === 'table' ? 'table' : 'tiles';
  const setView = (v) => setParams(loc, { view: v === 'table' ? 'table' : '' });
  const p = pageOf(loc, shown);
  if (error) return html`<p role="alert" class="error">${error}</p>`;
  if (!apps) return html`<p class="loading">Loading the applications…</p>`;
  return html`<section aria-label="Applications">
    <h1>Applications <small>${shown.length} of ${apps.length}</small></h1>
    <${Filters} loc=${loc} choices=${choices} sig=${sig} />
    <${Counts} apps=${shown} />
    <p class="views"><button type="button" aria-pressed=${view === 'tiles'} onClick=${() => setView('tiles')}>Tiles</button>
      <button type="button" aria-pressed=${view === 'table'} onClick=${() => setView('table')}>Table</button></p>
    ${shown.length > pageSizes[0] && html`<${Pager} loc=${loc} ...${p} />`}
    ${view === 'table' ? html`<${Table} apps=${p.shown} />` : html`<ul class="tiles">${p.shown.map((a) => html`<${Tile} key=${key(a)} app=${a} />`)}</ul>`}
  </section>`;
}
