// A small router over the History API: the URL is the state of a page
// (a filtered list is a link), and links navigate without a reload.
import { useState, useEffect } from './html.js';

const listeners = new Set();

export function navigate(to, { replace = false } = {}) {
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  listeners.forEach((fn) => fn());
}

window.addEventListener('popstate', () => listeners.forEach((fn) => fn()));

// useLocation re-renders its component whenever the URL changes.
export function useLocation() {
  const [loc, setLoc] = useState(() => new URL(location.href));
  useEffect(() => {
    const fn = () => setLoc(new URL(location.href));
    listeners.add(fn);
    return () => listeners.delete(fn);
  }, []);
  return loc;
}

// onLinkClick makes a plain <a href> navigate in place.
export function onLinkClick(e) {
  const a = e.target.closest('a[href]');
  if (!a || a.target || e.metaKey || e.ctrlKey || e.shiftKey || a.origin !== location.origin) return;
  if (a.pathname.startsWith('/auth/') || a.pathname.startsWith('/api/')) return;
  e.preventDefault();
  navigate(a.pathname + a.search);
}

// setParams replaces the URL's parameters named in changes (an empty
// value removes one), keeping the others: a list's filters and pages.
export function setParams(loc, changes) {
  const q = new URLSearchParams(loc.search);
  for (const [k, v] of Object.entries(changes)) {
    if (v) q.set(k, v); else q.delete(k);
  }
  navigate(loc.pathname + (q.toString() ? '?' + q : ''), { replace: true });
}
