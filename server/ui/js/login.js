// The login page: a local account's username and password, and the SSO
// button when argocd-cm sets oidc.config (the server's /auth/login).
import { html, useState, useEffect } from './html.js';
import { api, forgetDecisions } from './api.js';
import { navigate } from './router.js';

export function LoginPage({ loc }) {
  const [settings, setSettings] = useState(null);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const back = safeReturn(loc.searchParams.get('return_url'));
  useEffect(() => { api('/api/v1/settings').then(setSettings).catch(() => setSettings({})); }, []);
  const submit = async (e) => {
    e.preventDefault();
    const form = new FormData(e.target);
    setBusy(true);
    setError('');
    try {
      await api('/api/v1/session', { method: 'POST', body: { username: form.get('username'), password: form.get('password') } });
      forgetDecisions();
      navigate(back, { replace: true });
    } catch (err) {
      setError(err.message);
    } finally {
      setBusy(false);
    }
  };
  const sso = settings && settings.oidcConfig;
  return html`
    <main class="login">
      <h1>Ferry</h1>
      <form onSubmit=${submit} aria-label="Log in">
        <label>Username <input name="username" autocomplete="username" required /></label>
        <label>Password <input name="password" type="password" autocomplete="current-password" required /></label>
        <button type="submit" disabled=${busy}>Log in</button>
        ${error && html`<p role="alert" class="error">${error}</p>`}
      </form>
      ${sso && html`<a class="button sso" href=${'/auth/login?return_url=' + encodeURIComponent(back)}>Log in via ${sso.name || 'SSO'}</a>`}
    </main>`;
}

// safeReturn keeps a return path on this server.
function safeReturn(p) {
  return p && p.startsWith('/') && !p.startsWith('//') ? p : '/applications';
}
