// The projects page: each project the user may get, with what it allows
// (repositories, destinations, roles, sync windows) and a link to its apps.
import { html, useState, useEffect } from './html.js';
import { api } from './api.js';

function Project({ p }) {
  const spec = p.spec || {};
  const list = (items, fn) => (items && items.length ? items.map(fn).join(', ') : 'none');
  return html`<li class="tile">
    <article aria-label=${'Project ' + p.metadata.name}>
      <h2>${p.metadata.name}</h2>
      ${spec.description && html`<p>${spec.description}</p>`}
      <dl>
        <dt>Repositories</dt><dd>${list(spec.sourceRepos, (r) => r)}</dd>
        <dt>Destinations</dt><dd>${list(spec.destinations, (d) => `${d.name || d.server || '*'} / ${d.namespace || '*'}`)}</dd>
        <dt>Roles</dt><dd>${list(spec.roles, (r) => r.name)}</dd>
        <dt>Sync windows</dt><dd>${list(spec.syncWindows, (w) => `${w.kind} ${w.schedule} for ${w.duration}`)}</dd>
      </dl>
      <p><a href=${'/applications?project=' + encodeURIComponent(p.metadata.name)}>Its applications</a></p>
    </article>
  </li>`;
}

export function ProjectsPage() {
  const [projects, setProjects] = useState(null);
  const [error, setError] = useState('');
  useEffect(() => { api('/api/v1/projects').then((r) => setProjects(r.items || [])).catch((e) => setError(e.message)); }, []);
  if (error) return html`<p role="alert" class="error">${error}</p>`;
  if (!projects) return html`<p class="loading">Loading the projects…</p>`;
  const sorted = [...projects].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  return html`<section aria-label="Projects">
    <h1>Projects <small>${projects.length}</small></h1>
    <ul class="tiles">${sorted.map((p) => html`<${Project} key=${p.metadata.name} p=${p} />`)}</ul>
  </section>`;
}
