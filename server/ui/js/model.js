// What the pages derive from an Application as the API shows it: its
// key, its regions, and whether it matches the list's filters.

export const key = (a) => (a.metadata.namespace || '') + '/' + a.metadata.name;

export const appURL = (a) => `/applications/${encodeURIComponent(a.metadata.namespace || 'argocd')}/${encodeURIComponent(a.metadata.name)}`;

export function regionsOf(a) {
  const rs = (a.status && a.status.regions) || {};
  return Object.keys(rs).sort().map((name) => ({ name, ...rs[name] }));
}

export const syncOf = (a) => (a.status && a.status.sync && a.status.sync.status) || 'Unknown';
export const healthOf = (a) => (a.status && a.status.health && a.status.health.status) || 'Unknown';

export function repoOf(a) {
  const s = a.spec.source || (a.spec.sources && a.spec.sources[0]) || {};
  return s.repoURL || '';
}

// The filters of the list, as URL parameters.
export const filterNames = ['search', 'project', 'sync', 'health', 'region', 'namespace', 'label', 'repo'];

export function matches(a, f) {
  const labels = a.metadata.labels || {};
  const dests = a.spec.destinations || (a.spec.destination ? [a.spec.destination] : []);
  const checks = {
    search: (v) => a.metadata.name.includes(v) || repoOf(a).includes(v),
    project: (v) => (a.spec.project || 'default') === v,
    sync: (v) => syncOf(a) === v,
    health: (v) => healthOf(a) === v,
    region: (v) => regionsOf(a).some((r) => r.name === v),
    namespace: (v) => dests.some((d) => d.namespace === v),
    label: (v) => {
      const [k, val] = v.split('=');
      return val === undefined ? k in labels : labels[k] === val;
    },
    repo: (v) => repoOf(a) === v,
  };
  return filterNames.every((n) => !f[n] || checks[n](f[n]));
}

// age says how long ago a time was, as Argo CD's lists do: 5m, 3h, 2d.
export function age(t) {
  if (!t) return '';
  const s = Math.max(0, (Date.now() - new Date(t).getTime()) / 1000);
  if (s < 60) return Math.floor(s) + 's';
  if (s < 3600) return Math.floor(s / 60) + 'm';
  if (s < 86400) return Math.floor(s / 3600) + 'h';
  return Math.floor(s / 86400) + 'd';
}

export const short = (rev) => (rev && /^[0-9a-f]{40}$/.test(rev) ? rev.slice(0, 7) : rev || '');
