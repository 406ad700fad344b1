// @vitest-environment happy-dom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import { json, stubFetch, tick } from './testing';
import App from './App.svelte';
import Settings from './components/Settings.svelte';
import { applyTheme, getTheme } from './lib/theme';

class FakeWS {
  static OPEN = 1;
  readyState = 0;
  onopen: (() => void) | null = null;
  onmessage: ((m: { data: string }) => void) | null = null;
  onclose: ((e: { code: number }) => void) | null = null;
  constructor(public url: string) {}
  send() {}
  close() {}
}

let app: Record<string, any> | null = null;
beforeEach(() => localStorage.clear());
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = '';
  document.documentElement.removeAttribute('data-theme');
  vi.unstubAllGlobals();
});

const user = { id: 'u', name: 'Ann', email: 'a@b.co', role: 'user' };
const config = { name: 'Hearth', features: { enable_password_change_form: true } };

describe('sidebar chat actions', () => {
  it('rename sends {chat:{title}} and updates the row', async () => {
    vi.stubGlobal('WebSocket', FakeWS);
    const calls = stubFetch((method, url) => {
      if (url === '/api/config') return json(200, { name: 'Hearth', features: {} });
      if (url === '/api/v1/auths/') return json(200, user);
      if (url === '/api/v1/chats/?page=1') return json(200, [{ id: 'c1', title: 'Old', updated_at: 2, created_at: 1 }]);
      if (url.startsWith('/api/v1/chats/?page=')) return json(200, []);
      if (url === '/api/v1/chats/pinned') return json(200, [{ id: 'p1', title: 'Pinned one', updated_at: 1, created_at: 1 }]);
      if (url === '/api/models') return json(200, { data: [] });
      if (method === 'POST' && url === '/api/v1/chats/c1') return json(200, { id: 'c1', title: 'Renamed' });
      return undefined;
    });
    app = mount(App, { target: document.body });
    await tick();
    flushSync();
    const links = [...document.querySelectorAll('.chat-link')].map((b) => b.textContent?.trim());
    expect(links).toEqual(['Pinned one', 'Old']); // pinned group first

    const row = [...document.querySelectorAll('.chat-row')].find((r) => r.textContent?.includes('Old'))!;
    (row.querySelector('.more') as HTMLButtonElement).click();
    flushSync();
    const rename = [...row.querySelectorAll('.row-menu button')].find((b) => b.textContent === 'Rename') as HTMLButtonElement;
    rename.click();
    flushSync();
    const input = document.querySelector('input[aria-label="Chat title"]') as HTMLInputElement;
    input.value = 'Renamed';
    input.dispatchEvent(new Event('input', { bubbles: true }));
    input.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
    await tick();
    flushSync();

    const post = calls.find((c) => c.method === 'POST' && c.url === '/api/v1/chats/c1')!;
    expect(post.body).toEqual({ chat: { title: 'Renamed' } });
    expect([...document.querySelectorAll('.chat-link')].map((b) => b.textContent?.trim())).toContain('Renamed');
  });
});

describe('sidebar search, archive and delete', () => {
  it('debounces search, shows snippets as text, archives and deletes', async () => {
    vi.stubGlobal('WebSocket', FakeWS);
    vi.stubGlobal('confirm', () => true);
    const calls = stubFetch((method, url) => {
      if (url === '/api/config') return json(200, { name: 'Hearth', features: {} });
      if (url === '/api/v1/auths/') return json(200, user);
      if (url === '/api/v1/chats/?page=1') return json(200, [
        { id: 'a', title: 'Alpha', updated_at: 2, created_at: 1 },
        { id: 'b', title: 'Beta', updated_at: 1, created_at: 1 },
      ]);
      if (url.startsWith('/api/v1/chats/?page=')) return json(200, []);
      if (url === '/api/v1/chats/pinned') return json(200, []);
      if (url === '/api/models') return json(200, { data: [] });
      if (url.startsWith('/api/v1/chats/search')) return json(200, [{ id: 'b', title: 'Beta', updated_at: 1, snippet: '<i>found</i> it' }]);
      if (method === 'POST' && url === '/api/v1/chats/a/archive') return json(200, { id: 'a' });
      if (method === 'DELETE' && url === '/api/v1/chats/b') return json(200, true);
      return undefined;
    });
    app = mount(App, { target: document.body });
    await tick();
    flushSync();
    const box = document.querySelector('input[type=search]') as HTMLInputElement;
    box.value = 'fo';
    box.dispatchEvent(new Event('input', { bubbles: true }));
    box.value = 'found';
    box.dispatchEvent(new Event('input', { bubbles: true }));
    await tick(300);
    flushSync();
    const searches = calls.filter((c) => c.url.startsWith('/api/v1/chats/search'));
    expect(searches.map((c) => c.url)).toEqual(['/api/v1/chats/search?text=found&page=1']);
    expect(document.querySelector('.snippet')?.textContent).toBe('<i>found</i> it');
    expect(document.querySelector('.chats i')).toBeNull();
    box.value = '';
    box.dispatchEvent(new Event('input', { bubbles: true }));
    flushSync();
    expect(document.querySelectorAll('.chat-link')).toHaveLength(2);

    const menu = (title: string, item: string) => {
      const row = [...document.querySelectorAll('.chat-row')].find((r) => r.textContent?.includes(title))!;
      (row.querySelector('.more') as HTMLButtonElement).click();
      flushSync();
      ([...row.querySelectorAll('.row-menu button')].find((b) => b.textContent === item) as HTMLButtonElement).click();
    };
    menu('Alpha', 'Archive');
    await tick();
    flushSync();
    menu('Beta', 'Delete');
    await tick();
    flushSync();
    expect(calls.some((c) => c.method === 'POST' && c.url === '/api/v1/chats/a/archive')).toBe(true);
    expect(calls.some((c) => c.method === 'DELETE' && c.url === '/api/v1/chats/b')).toBe(true);
    expect(document.querySelectorAll('.chat-link')).toHaveLength(0);
  });
});

describe('settings dialog', () => {
  it('shows a new API key once, then only its hint', async () => {
    let listed: any[] = [];
    stubFetch((method, url, body) => {
      if (method === 'GET' && url === '/api/v1/auths/api_keys') return json(200, listed);
      if (method === 'POST' && url === '/api/v1/auths/api_keys') {
        const k = { id: 'k1', name: body.name, hint: 'sk-…wxyz', created_at: 1700000000, last_used_at: null };
        listed = [k];
        return json(200, { ...k, key: 'sk-supersecretwxyz' });
      }
      return undefined;
    });
    app = mount(Settings, { target: document.body, props: { config, user, onclose: () => {}, onuser: () => {} } });
    await tick();
    flushSync();

    const name = document.querySelector('input[name=key-name]') as HTMLInputElement;
    name.value = 'ci';
    name.dispatchEvent(new Event('input', { bubbles: true }));
    flushSync();
    (name.form as HTMLFormElement).dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }));
    await tick();
    flushSync();
    expect(document.querySelector('.secret')?.textContent).toBe('sk-supersecretwxyz');
    expect(document.body.textContent).toContain('will not be shown again');
    expect(document.querySelector('.keys')?.textContent).toContain('sk-…wxyz');
    expect(document.querySelector('.keys')?.textContent).not.toContain('supersecret');

    const done = [...document.querySelectorAll('button')].find((b) => b.textContent === 'Done') as HTMLButtonElement;
    done.click();
    flushSync();
    expect(document.body.textContent).not.toContain('sk-supersecretwxyz');
    expect(document.querySelector('.keys')?.textContent).toContain('sk-…wxyz');

    // Reopening the dialog lists the hint only.
    unmount(app);
    app = mount(Settings, { target: document.body, props: { config, user, onclose: () => {}, onuser: () => {} } });
    await tick();
    flushSync();
    expect(document.querySelector('.secret')).toBeNull();
    expect(document.querySelector('.keys')?.textContent).toContain('ci');
    expect(document.body.textContent).not.toContain('supersecret');
  });

  it('shows the password form only when enabled, with the server detail on error', async () => {
    stubFetch((method, url) => {
      if (url === '/api/v1/auths/api_keys') return json(200, []);
      if (method === 'POST' && url === '/api/v1/auths/update/password') return json(400, { detail: 'Incorrect <b>password</b>' });
      return undefined;
    });
    app = mount(Settings, { target: document.body, props: { config: { name: 'H', features: {} }, user, onclose: () => {}, onuser: () => {} } });
    flushSync();
    expect(document.querySelector('input[name=new_password]')).toBeNull();
    unmount(app);
    app = mount(Settings, { target: document.body, props: { config, user, onclose: () => {}, onuser: () => {} } });
    flushSync();
    const set = (n: string, v: string) => {
      const i = document.querySelector(`input[name=${n}]`) as HTMLInputElement;
      i.value = v;
      i.dispatchEvent(new Event('input', { bubbles: true }));
    };
    set('password', 'old');
    set('new_password', 'newpass1');
    set('confirm_password', 'newpass1');
    flushSync();
    const form = (document.querySelector('input[name=password]') as HTMLInputElement).form!;
    form.dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }));
    await tick();
    flushSync();
    expect(form.querySelector('.error')?.textContent).toBe('Incorrect <b>password</b>');
    expect(form.querySelector('b')).toBeNull();
  });

  it('removing the picture sends profile_image_url "" with the name; untouched, none is sent', async () => {
    const calls = stubFetch((method, url, body) => {
      if (url === '/api/v1/auths/api_keys') return json(200, []);
      if (method === 'POST' && url === '/api/v1/auths/update/profile') return json(200, { ...user, ...body });
      return undefined;
    });
    let got: any = null;
    app = mount(Settings, { target: document.body, props: { config, user, onclose: () => {}, onuser: (u: any) => (got = u) } });
    flushSync();
    const form = (document.querySelector('input[name=profile-name]') as HTMLInputElement).form!;
    form.dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }));
    await tick();
    expect(calls.filter((c) => c.url === '/api/v1/auths/update/profile').pop()!.body).toEqual({ name: 'Ann' });
    const remove = [...form.querySelectorAll('button')].find((b) => b.textContent === 'Remove')!;
    remove.click();
    flushSync();
    expect((form.querySelector('.pic img') as HTMLImageElement).getAttribute('src')).toBe('/favicon.svg');
    form.dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }));
    await tick();
    flushSync();
    expect(calls.filter((c) => c.url === '/api/v1/auths/update/profile').pop()!.body).toEqual({ name: 'Ann', profile_image_url: '' });
    expect(got.profile_image_url).toBe('');
    expect((form.querySelector('.pic img') as HTMLImageElement).getAttribute('src')).toMatch(/^\/api\/v1\/users\/u\/profile\/image\?v=2$/);
  });

  it('theme choice persists and sets data-theme', async () => {
    stubFetch((_m, url) => (url === '/api/v1/auths/api_keys' ? json(200, []) : undefined));
    vi.stubGlobal('matchMedia', (q: string) => ({ matches: q.includes('dark'), media: q, addEventListener() {}, removeEventListener() {} }));
    app = mount(Settings, { target: document.body, props: { config, user, onclose: () => {}, onuser: () => {} } });
    flushSync();
    const radio = (v: string) => document.querySelector(`input[name=theme][value=${v}]`) as HTMLInputElement;
    expect(radio('system').checked).toBe(true);

    radio('light').click();
    flushSync();
    expect(localStorage.getItem('hearth.theme')).toBe('light');
    expect(document.documentElement.getAttribute('data-theme')).toBe('light');

    radio('system').click();
    flushSync();
    expect(localStorage.getItem('hearth.theme')).toBe('system');
    expect(document.documentElement.getAttribute('data-theme')).toBe('dark'); // prefers-color-scheme: dark

    radio('dark').click();
    flushSync();
    unmount(app);
    app = null;
    document.documentElement.removeAttribute('data-theme');
    expect(getTheme()).toBe('dark');
    applyTheme(); // what the next page load does
    expect(document.documentElement.getAttribute('data-theme')).toBe('dark');
  });
});
