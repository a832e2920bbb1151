// The REST API of ferry-server, the UI's only source: the same paths a
// script uses (docs/user-guide/api.md). The session is the argocd.token
// cookie that POST /api/v1/session sets.
import { navigate } from './router.js';

export class APIError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export async function api(path, { method = 'GET', body, query } = {}) {
  let url = path;
  if (query) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') q.set(k, v);
    if ([...q].length) url += '?' + q;
  }
  const init = { method, headers: {}, credentials: 'same-origin' };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers['Content-Type'] = 'application/json';
  }
  const resp = await fetch(url, init);
  const text = await resp.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = null; }
  if (!resp.ok) {
    if (resp.status === 401 && !path.startsWith('/api/v1/session')) {
      navigate('/login?return_url=' + encodeURIComponent(location.pathname + location.search), { replace: true });
    }
    throw new APIError(resp.status, (data && data.message) || text || resp.statusText);
  }
  return data;
}

// appPath is the API path of an app, with its namespace as Argo CD passes
// it (appNamespace) and the query's other parameters.
export function appPath(app, suffix = '', query = {}) {
  const q = new URLSearchParams();
  if (app.metadata.namespace) q.set('appNamespace', app.metadata.namespace);
  for (const [k, v] of Object.entries(query)) if (v !== undefined) q.set(k, v);
  return '/api/v1/applications/' + encodeURIComponent(app.metadata.name) + suffix + (q.toString() ? '?' + q : '');
}

// canI asks whether the user may do action on object (Argo CD's can-i),
// once per combination.
const decisions = new Map();
export function canI(resource, action, object) {
  const key = [resource, action, object].join(' ');
  if (!decisions.has(key)) {
    decisions.set(key, api(`/api/v1/account/can-i/${resource}/${encodeURIComponent(action)}/${object}`)
      .then((r) => r.value === 'yes').catch(() => false));
  }
  return decisions.get(key);
}
export function forgetDecisions() { decisions.clear(); }

// watchApps calls onEvent with each event of the stream of apps ({type,
// application}) that query selects (the list's filters: name,
// appNamespace, projects, selector): first every such app as ADDED, then
// a BOOKMARK (the server's initial-events-end: those were all there
// are), then their changes. Each (re)connection begins with an OPEN, as
// the browser connects the stream again after an error and it starts
// over. It answers the function that closes the stream.
export function watchApps(query, onEvent) {
  const q = new URLSearchParams({ allowWatchBookmarks: 'true' });
  for (const [k, v] of Object.entries(query)) if (v) q.set(k, v);
  const source = new EventSource('/api/v1/stream/applications?' + q);
  // A burst of messages (a push that moves every app) arrives in one
  // task: it only queues them, and they are parsed and handled a few
  // milliseconds at a time, so that the page keeps answering its user.
  const queue = [];
  let next = 0;
  let timer = 0;
  const drain = () => {
    timer = 0;
    const until = performance.now() + 8;
    while (next < queue.length && performance.now() < until) {
      let ev;
      try { ev = JSON.parse(queue[next++]).result; } catch { ev = null; }
      if (ev) onEvent(ev);
    }
    if (next < queue.length) timer = setTimeout(drain, 0);
    else queue.length = next = 0;
  };
  const push = (data) => {
    queue.push(data);
    if (!timer) timer = setTimeout(drain, 0);
  };
  source.onopen = () => push('{"result":{"type":"OPEN"}}');
  source.onmessage = (m) => push(m.data);
  return () => { source.close(); clearTimeout(timer); };
}

// settings are the server's public settings (/api/v1/settings), read once.
let settingsOnce = null;
export function settings() {
  if (!settingsOnce) settingsOnce = api('/api/v1/settings').catch(() => ({}));
  return settingsOnce;
}

// workflowURL is the app's workflow in the Temporal Web UI, when the
// server knows where that UI is; app/NAME is the workflow's ID.
export function workflowURL(s, app) {
  if (!s.temporalUIURL) return '';
  const ns = app.metadata.namespace;
  const name = ns && ns !== s.controllerNamespace ? ns + '/' + app.metadata.name : app.metadata.name;
  return `${s.temporalUIURL}/namespaces/${encodeURIComponent(s.temporalNamespace)}/workflows/${encodeURIComponent('app/' + name)}`;
}
