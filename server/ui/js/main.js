// Ferry's web UI: the shell (who is logged in, the pages) and the routes.
import { html, render, useState, useEffect } from './html.js';
import { api, forgetDecisions } from './api.js';
import { useLocation, navigate, onLinkClick } from './router.js';
import { LoginPage } from './login.js';
import { AppsPage } from './apps.js';
import { AppPage } from './app.js';
import { ProjectsPage } from './projects.js';
import { AppSetsPage } from './appsets.js';

function Shell({ user, children }) {
  const logout = async () => {
    await api('/api/v1/session', { method: 'DELETE' }).catch(() => {});
    forgetDecisions();
    navigate('/login');
  };
  return html`
    <header class="top">
      <a class="brand" href="/applications">Ferry</a>
      <nav aria-label="Pages"><a href="/applications">Applications</a> <a href="/applicationsets">ApplicationSets</a> <a href="/projects">Projects</a></nav>
      <span class="user">
        <span aria-label="Logged in as">${user.username}</span>
        <button type="button" onClick=${logout}>Log out</button>
      </span>
    </header>
    <main>${children}</main>`;
}

function Root() {
  const loc = useLocation();
  const [user, setUser] = useState(null);
  const onLogin = loc.pathname === '/login';
  useEffect(() => {
    if (onLogin) return;
    api('/api/v1/session/userinfo').then((u) => {
      if (!u.loggedIn) navigate('/login?return_url=' + encodeURIComponent(loc.pathname + loc.search), { replace: true });
      else setUser(u);
    }).catch(() => navigate('/login', { replace: true }));
  }, [onLogin]);
  if (onLogin) return html`<${LoginPage} loc=${loc} />`;
  if (!user) return html`<p class="loading">Loading…</p>`;
  const parts = loc.pathname.split('/').filter(Boolean);
  let page;
  if (parts[0] === 'applications' && parts.length >= 2) {
    // /applications/NAME is the app in the server's namespace, as in Argo CD.
    const [ns, name] = parts.length >= 3 ? [parts[1], parts[2]] : ['', parts[1]];
    page = html`<${AppPage} key=${ns + '/' + name} namespace=${ns} name=${name} loc=${loc} user=${user} />`;
  } else if (parts.length === 0 || parts[0] === 'applications') {
    if (parts.length === 0) { navigate('/applications', { replace: true }); return null; }
    page = html`<${AppsPage} loc=${loc} />`;
  } else if (parts[0] === 'applicationsets') {
    page = html`<${AppSetsPage} />`;
  } else if (parts[0] === 'projects') {
    page = html`<${ProjectsPage} />`;
  } else {
    page = html`<p role="alert">No such page: ${loc.pathname}</p>`;
  }
  return html`<${Shell} user=${user}>${page}<//>`;
}

document.addEventListener('click', onLinkClick);
// The page's "Loading Ferry…" goes: Preact renders beside what it did
// not render.
const root = document.getElementById('root');
root.replaceChildren();
render(html`<${Root} />`, root);
