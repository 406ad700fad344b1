// @vitest-environment happy-dom
import { afterEach, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import { json, tick } from './testing';
import App from './App.svelte';

class FakeWS {
  static last: FakeWS;
  static OPEN = 1;
  readyState = 1;
  sent: any[] = [];
  onopen: (() => void) | null = null;
  onmessage: ((m: { data: string }) => void) | null = null;
  onclose: ((e: { code: number }) => void) | null = null;
  constructor(public url: string) {
    FakeWS.last = this;
    setTimeout(() => {
      this.onopen?.();
      this.push({ type: 'ready', user_id: 'u' });
    });
  }
  send(s: string) { this.sent.push(JSON.parse(s)); }
  close() {}
  push(f: unknown) { this.onmessage?.({ data: JSON.stringify(f) }); }
}

afterEach(() => vi.unstubAllGlobals());

it('sends a turn through the SPEC §4 flow and renders streamed content', async () => {
  const calls: { method: string; url: string; body: any }[] = [];
  vi.stubGlobal('WebSocket', FakeWS);
  vi.stubGlobal('fetch', vi.fn(async (url: string, init: RequestInit) => {
    const body = init?.body ? JSON.parse(init.body as string) : undefined;
    calls.push({ method: init?.method ?? 'GET', url, body });
    if (url === '/api/config') return json(200, { name: 'Hearth', features: {}, default_models: '' });
    if (url === '/api/v1/auths/') return json(200, { id: 'u', name: 'Ann', email: 'a@b.co', role: 'user' });
    if (url.startsWith('/api/v1/chats/?page=')) return json(200, []);
    if (url === '/api/models') return json(200, { data: [{ id: 'm1', name: 'Model One' }] });
    if (url === '/api/v1/chats/new') return json(200, { id: 'c1', title: 'New Chat', chat: body.chat });
    if (url === '/api/v1/chats/c1') return json(200, { id: 'c1', title: 'Greeting', chat: body?.chat });
    if (url === '/api/chat/completions') return json(200, { status: true, task_ids: ['t'], chat_id: 'c1' });
    return json(404, { detail: 'Not Found' });
  }));

  const app = mount(App, { target: document.body });
  await tick();
  flushSync();
  expect(document.querySelector('select')?.value).toBe('m1');

  const ta = document.querySelector('textarea')!;
  ta.value = 'Hello?';
  ta.dispatchEvent(new Event('input', { bubbles: true }));
  ta.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
  await tick();
  flushSync();

  const created = calls.find((c) => c.url === '/api/v1/chats/new')!.body.chat;
  const h = created.history;
  const asst = h.messages[h.currentId];
  const user = h.messages[asst.parentId];
  expect(asst).toMatchObject({ role: 'assistant', content: '', childrenIds: [] });
  expect(user).toMatchObject({ role: 'user', content: 'Hello?', parentId: null, childrenIds: [asst.id] });
  expect(created.messages.map((m: any) => m.id)).toEqual([user.id, asst.id]);

  const comp = calls.find((c) => c.url === '/api/chat/completions')!.body;
  expect(comp).toMatchObject({ model: 'm1', chat_id: 'c1', id: asst.id, stream: true,
    messages: [{ role: 'user', content: 'Hello?' }],
    background_tasks: { title_generation: true, tags_generation: true, follow_up_generation: true } });
  expect(typeof comp.session_id).toBe('string');

  const ev = (seq: number, data: unknown) => FakeWS.last.push({ type: 'events', seq, chat_id: 'c1', message_id: asst.id, data });
  ev(1, { type: 'chat:active', data: { active: true } });
  ev(2, { type: 'chat:completion', data: { content: 'Hi' } });
  ev(3, { type: 'chat:completion', data: { content: 'Hi there' } });
  flushSync();
  expect(document.querySelector('.msg.assistant .text')?.textContent).toBe('Hi there');
  // Esc while the answer runs stops it.
  window.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
  await tick();
  expect(calls.some((c) => c.method === 'POST' && c.url === '/api/tasks/chat/c1/stop')).toBe(true);
  ev(4, { type: 'chat:completion', data: { content: 'Hi there!', done: true } });
  ev(5, { type: 'chat:title', data: 'Greeting' });
  await tick();
  flushSync();
  expect(document.querySelector('.msg.assistant .text')?.textContent).toBe('Hi there!');
  expect(document.querySelector('.chat-link')?.textContent?.trim()).toBe('Greeting');
  expect(document.querySelector('.title')?.textContent).toBe('Greeting');

  // Suggested follow-ups show under the answer; clicking one sends it.
  ev(6, { type: 'chat:message:follow_ups', data: { follow_ups: ['More', 42, 'Why?'] } });
  flushSync();
  const chips = [...document.querySelectorAll('.follow-up')] as HTMLButtonElement[];
  expect(chips.map((b) => b.textContent)).toEqual(['More', 'Why?']);
  // A follow-up updates the chat with only the new messages and the changed parent.
  chips[0].click();
  await tick();
  flushSync();
  expect(document.querySelectorAll('.follow-up')).toHaveLength(0);
  expect([...document.querySelectorAll('.msg.user .text')].map((e) => e.textContent)).toEqual(['Hello?', 'More']);
  const upd = calls.filter((c) => c.url === '/api/v1/chats/c1' && c.method === 'POST').pop()!.body.chat;
  const ids = Object.keys(upd.history.messages);
  expect(ids).toHaveLength(3);
  expect(upd.history.messages[asst.id].childrenIds).toHaveLength(1);
  expect(upd.messages).toHaveLength(4);
  // The second turn asks for follow-ups only: the chat keeps its title.
  const second = calls.filter((c) => c.url === '/api/chat/completions').pop()!.body;
  expect(second.messages.map((m: any) => m.content)).toEqual(['Hello?', 'Hi there!', 'More']);
  expect(second.background_tasks).toEqual({ follow_up_generation: true });
  // Edits made elsewhere (POST …/messages/{id}, tool servers) arrive as events.
  ev(7, { type: 'chat:message', data: { chat_id: 'c1', message_id: asst.id, content: 'Edited elsewhere' } });
  ev(8, { type: 'chat:message:delta', data: { content: ' and more' } });
  flushSync();
  expect(document.querySelector('.msg.assistant .text')?.textContent).toBe('Edited elsewhere and more');
  unmount(app);
});

it('pages a long thread: only the last 40 messages are rendered until the user scrolls up', async () => {
  vi.stubGlobal('WebSocket', FakeWS);
  vi.stubGlobal('IntersectionObserver', class { observe() {} disconnect() {} });
  const messages: Record<string, any> = {};
  for (let i = 0; i < 100; i++) {
    messages['m' + i] = { id: 'm' + i, parentId: i ? 'm' + (i - 1) : null, childrenIds: i < 99 ? ['m' + (i + 1)] : [],
      role: i % 2 ? 'assistant' : 'user', content: 'text ' + i, timestamp: i, done: true };
  }
  history.replaceState(null, '', '/c/long');
  vi.stubGlobal('fetch', vi.fn(async (url: string) => {
    if (url === '/api/config') return json(200, { name: 'Hearth', features: {}, default_models: '' });
    if (url === '/api/v1/auths/') return json(200, { id: 'u', name: 'Ann', email: 'a@b.co', role: 'user' });
    if (url.startsWith('/api/v1/chats/?page=')) return json(200, []);
    if (url === '/api/models') return json(200, { data: [{ id: 'm1' }] });
    if (url === '/api/v1/chats/long') return json(200, { id: 'long', title: 'Long', chat: { models: ['m1'], history: { currentId: 'm99', messages } } });
    return json(404, { detail: 'Not Found' });
  }));
  const app = mount(App, { target: document.body });
  await tick(40);
  flushSync();
  const texts = () => [...document.querySelectorAll('.msg .text')].map((e) => e.textContent);
  expect(texts()).toHaveLength(40);
  expect(texts()[39]).toBe('text 99');
  expect(texts()[0]).toBe('text 60');
  const earlier = [...document.querySelectorAll('button')].find((b) => b.textContent?.startsWith('Show earlier'))!;
  expect(earlier.textContent).toContain('(60)');
  earlier.click();
  await tick();
  flushSync();
  expect(texts()).toHaveLength(80);
  expect(texts()[0]).toBe('text 20');
  unmount(app);
  history.replaceState(null, '', '/');
});

it('says why there is nothing to pick when no model is available', async () => {
  vi.stubGlobal('WebSocket', FakeWS);
  for (const role of ['user', 'admin']) {
    vi.stubGlobal('fetch', vi.fn(async (url: string) => {
      if (url === '/api/config') return json(200, { name: 'Hearth', features: {}, default_models: '' });
      if (url === '/api/v1/auths/') return json(200, { id: 'u', name: 'Ann', email: 'a@b.co', role });
      if (url.startsWith('/api/v1/chats/?page=')) return json(200, []);
      if (url === '/api/models') return json(200, { data: [] });
      return json(404, { detail: 'Not Found' });
    }));
    const app = mount(App, { target: document.body });
    await tick(40);
    flushSync();
    const hint = document.querySelector('.no-models')?.textContent ?? '';
    expect(hint).toContain(role === 'admin' ? 'Admin → Connections' : 'No model is available to you yet');
    unmount(app);
  }
});
