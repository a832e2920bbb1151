// The ApplicationSets page: each set the user may get, with its
// generators, its conditions, the apps it generated (with their sync and
// health, linked to their pages) and a RollingSync's progress.
import { html, useState, useEffect } from './html.js';
import { api } from './api.js';

const generatorKinds = (gens) => (gens || []).map((g) => Object.keys(g).filter((k) => k !== 'selector').join('+')).join(', ');

function AppSet({ set }) {
  const st = set.status || {};
  const ns = set.metadata.namespace;
  const progress = new Map((st.applicationStatus || []).map((a) => [a.application, a]));
  return html`<li class="tile">
    <article aria-label=${'ApplicationSet ' + set.metadata.name}>
      <h2>${set.metadata.name}</h2>
      <dl>
        <dt>Project</dt><dd>${(set.spec.template.spec || {}).project || 'default'}</dd>
        <dt>Generators</dt><dd>${generatorKinds(set.spec.generators)}</dd>
        ${(st.conditions || []).filter((c) => c.status === 'True').map((c) => html`<dt key=${c.type}>${c.type}</dt><dd>${c.message}</dd>`)}
      </dl>
      <ul class="regions" aria-label="Its applications">
        ${(st.resources || []).map((r) => {
          const p = progress.get(r.name);
          return html`<li key=${r.name}><a href=${`/applications/${encodeURIComponent(r.namespace || ns)}/${encodeURIComponent(r.name)}`}>${r.name}</a>
            <span class=${'status sync ' + (r.status || 'unknown').toLowerCase()}>${r.status || 'Unknown'}</span>
            ${r.health && html`<span class=${'status health ' + (r.health.status || '').toLowerCase()}>${r.health.status}</span>`}
            ${p && html` <span class="info">step ${p.step}: ${p.status}</span>`}</li>`;
        })}
      </ul>
    </article>
  </li>`;
}

export function AppSetsPage() {
  const [sets, setSets] = useState(null);
  const [error, setError] = useState('');
  useEffect(() => { api('/api/v1/applicationsets').then((r) => setSets(r.items || [])).catch((e) => setError(e.message)); }, []);
  if (error) return html`<p role="alert" class="error">${error}</p>`;
  if (!sets) return html`<p class="loading">Loading the ApplicationSets…</p>`;
  return html`<section aria-label="ApplicationSets">
    <h1>ApplicationSets <small>${sets.length}</small></h1>
    <ul class="tiles">${sets.map((s) => html`<${AppSet} key=${s.metadata.name} set=${s} />`)}</ul>
  </section>`;
}
