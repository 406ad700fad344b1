// @vitest-environment happy-dom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import App from './App.svelte';

function json(status: number, body: unknown) {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
}

function stubFetch(routes: Record<string, () => Response>) {
  vi.stubGlobal('fetch', vi.fn(async (url: string) => {
    const r = routes[url];
    return r ? r() : json(404, { detail: 'Not Found' });
  }));
}

const tick = () => new Promise((r) => setTimeout(r, 20));
let app: Record<string, any> | null = null;

afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = '';
  vi.unstubAllGlobals();
});

const features = { enable_signup: true, enable_login_form: true, enable_signup_password_confirmation: true };

describe('App shell', () => {
  it('shows the sign-in form with WEBUI_NAME', async () => {
    stubFetch({
      '/api/config': () => json(200, { name: 'Acme Chat', features }),
      '/api/v1/auths/': () => json(401, { detail: 'Not authenticated' }),
    });
    app = mount(App, { target: document.body });
    await tick();
    flushSync();
    expect(document.querySelector('h1')?.textContent).toBe('Sign in to Acme Chat');
    expect(document.title).toBe('Acme Chat');
    expect(document.querySelector('input[type=email]')).not.toBeNull();
  });

  it('onboarding shows sign-up with the confirmation field', async () => {
    stubFetch({
      '/api/config': () => json(200, { name: 'Hearth', onboarding: true, features }),
      '/api/v1/auths/': () => json(401, { detail: 'Not authenticated' }),
    });
    app = mount(App, { target: document.body });
    await tick();
    flushSync();
    expect(document.querySelector('input[name=name]')).not.toBeNull();
    expect(document.querySelector('input[name=confirm]')).not.toBeNull();
  });

  it('shows the pending overlay as text, never HTML', async () => {
    stubFetch({
      '/api/config': () => json(200, {
        name: 'Hearth', features,
        ui: { pending_user_overlay_title: 'Wait <b>please</b>', pending_user_overlay_content: '<img src=x onerror=alert(1)>' },
      }),
      '/api/v1/auths/': () => json(200, { id: 'u', name: 'P', email: 'p@x.io', role: 'pending' }),
    });
    app = mount(App, { target: document.body });
    await tick();
    flushSync();
    expect(document.querySelector('h1')?.textContent).toBe('Wait <b>please</b>');
    expect(document.querySelector('b')).toBeNull();
    expect(document.querySelector('img')).toBeNull();
    expect(document.body.textContent).toContain('<img src=x onerror=alert(1)>');
  });
});

describe('single sign-on landing', () => {
  it('a signed-in session arriving at /auth (the OAuth redirect) moves to /', async () => {
    vi.stubGlobal('WebSocket', class { close() {} send() {} });
    history.replaceState(null, '', '/auth');
    stubFetch({
      '/api/config': () => json(200, { name: 'Hearth', features }),
      '/api/v1/auths/': () => json(200, { id: 'u', name: 'Ann', email: 'a@b.co', role: 'user' }),
      '/api/models': () => json(200, { data: [] }),
      '/api/v1/chats/?page=1': () => json(200, []),
    });
    app = mount(App, { target: document.body });
    await tick();
    flushSync();
    expect(location.pathname).toBe('/');
    expect(document.querySelector('textarea')).not.toBeNull();
  });
});
