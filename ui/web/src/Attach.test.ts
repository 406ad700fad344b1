// @vitest-environment happy-dom
// Attachments in the composer (upload → processing → ready/failed, knowledge
// collections), the `files` a turn carries, and an answer's sources.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import { json, tick } from './testing';
import App from './App.svelte';
import { groupSources } from './components/attach/sources';
import { formatSize, requestFiles, waitProcessed } from './lib/files';

class FakeWS {
  static last: FakeWS;
  static OPEN = 1;
  readyState = 1;
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
  send() {}
  close() {}
  push(f: unknown) { this.onmessage?.({ data: JSON.stringify(f) }); }
}

/** A status stream the test writes to: send(obj) emits one SSE event, end() closes it. */
function sse() {
  let ctl!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (ctl = c) });
  const enc = new TextEncoder();
  return {
    response: () => new Response(body, { status: 200, headers: { 'Content-Type': 'text/event-stream' } }),
    send: (o: unknown) => ctl.enqueue(enc.encode(`data: ${JSON.stringify(o)}\n\n`)),
    end: () => ctl.close(),
  };
}

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

type Call = { method: string; url: string; body: any };
type Route = (method: string, url: string, body: any) => Response | Promise<Response> | undefined;

/** The signed-in app with one model; route answers everything else (404 when it returns nothing). */
async function start(route: Route) {
  const calls: Call[] = [];
  vi.stubGlobal('WebSocket', FakeWS);
  vi.stubGlobal('fetch', vi.fn(async (url: string, init?: RequestInit) => {
    const method = init?.method ?? 'GET';
    const raw = init?.body;
    const body = typeof raw === 'string' ? JSON.parse(raw) : raw; // uploads are FormData
    calls.push({ method, url, body });
    if (url === '/api/config') return json(200, { name: 'Hearth', features: {}, default_models: '' });
    if (url === '/api/v1/auths/') return json(200, { id: 'u', name: 'Ann', email: 'a@b.co', role: 'user' });
    if (url.startsWith('/api/v1/chats/?page=') || url === '/api/v1/chats/pinned') return json(200, []);
    if (url === '/api/models') return json(200, { data: [{ id: 'm1', name: 'Model One' }] });
    return (await route(method, url, body)) ?? json(404, { detail: 'Not Found' });
  }));
  const app = mount(App, { target: document.body });
  await tick();
  flushSync();
  return { app, calls };
}

const $ = (sel: string) => document.querySelector(sel) as HTMLElement | null;
const sendButton = () => $('.composer button[type=submit]') as HTMLButtonElement;
const chipText = () => [...document.querySelectorAll('.composer .chip .text')].map((c) => c.textContent?.replace(/\s+/g, ' ').trim());

async function settle(ms = 20) {
  await tick(ms);
  flushSync();
}

/** Picks files with the paperclip's file input. */
function pick(...files: File[]) {
  const input = $('.composer input[type=file]') as HTMLInputElement;
  Object.defineProperty(input, 'files', { value: files, configurable: true });
  input.dispatchEvent(new Event('change', { bubbles: true }));
}

function type(text: string) {
  const ta = $('.composer textarea') as HTMLTextAreaElement;
  ta.value = text;
  ta.dispatchEvent(new Event('input', { bubbles: true }));
  flushSync();
}

const record = (id: string, name: string) => ({
  status: true, id, user_id: 'u', hash: null, filename: name, data: { status: 'pending' },
  meta: { name, content_type: 'text/plain', size: 2048 }, created_at: 1, updated_at: 1,
});

afterEach(() => {
  vi.unstubAllGlobals();
  document.body.innerHTML = '';
});

describe('attachments', () => {
  it('uploads a file, waits for processing, then sends the file and a collection as Open WebUI does', async () => {
    const upload = deferred<Response>();
    const status = sse();
    const { app, calls } = await start((method, url, body) => {
      if (method === 'POST' && url === '/api/v1/files/') return upload.promise;
      if (url === '/api/v1/files/f1/process/status?stream=true') return status.response();
      if (url === '/api/v1/knowledge/') return json(200, { items: [{ id: 'k1', name: 'Handbook', description: 'Policies' }], total: 1 });
      if (url === '/api/v1/chats/new') return json(200, { id: 'c1', title: 'New Chat', chat: body.chat });
      if (url === '/api/v1/chats/c1') return json(200, { id: 'c1', title: 'New Chat', chat: body?.chat });
      if (url === '/api/chat/completions') return json(200, { status: true, task_ids: ['t'], chat_id: 'c1' });
    });

    pick(new File(['hello world'], 'notes.txt', { type: 'text/plain' }));
    await settle();
    expect(chipText()).toEqual(['notes.txt 11 B · Uploading…']);
    const up = calls.find((c) => c.url === '/api/v1/files/')!;
    expect(up.method).toBe('POST');
    expect((up.body as FormData).get('file')).toBeInstanceOf(File);
    type('What does it say?');
    await settle();
    expect(sendButton().disabled).toBe(true);

    upload.resolve(json(200, record('f1', 'notes.txt')));
    await settle();
    status.send({ status: 'pending' });
    await settle();
    expect(chipText()).toEqual(['notes.txt 11 B · Processing…']);
    // Sending waits, and says why; Enter does not send either.
    expect(sendButton().disabled).toBe(true);
    expect($('.composer [role=status]')?.textContent).toContain('once the attachments are ready');
    $('.composer textarea')!.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
    await settle();
    expect(calls.some((c) => c.url === '/api/v1/chats/new')).toBe(false);

    status.send({ status: 'completed' });
    await settle();
    expect(chipText()).toEqual(['notes.txt 11 B']);
    expect($('.composer [role=status]')).toBeNull();
    expect(sendButton().disabled).toBe(false);

    // A knowledge collection from the picker.
    ($('button[aria-label="Attach a knowledge collection"]') as HTMLButtonElement).click();
    await settle();
    const kb = [...document.querySelectorAll('[role=dialog] li button')] as HTMLButtonElement[];
    expect(kb.map((b) => b.textContent?.trim())).toEqual(['Handbook Policies']);
    kb[0].click();
    await settle();
    expect($('[role=dialog]')).toBeNull();
    expect(chipText()).toEqual(['notes.txt 11 B', 'Handbook Collection']);

    sendButton().click();
    await settle();
    const h = calls.find((c) => c.url === '/api/v1/chats/new')!.body.chat.history;
    const asst = h.messages[h.currentId];
    const user = h.messages[asst.parentId];
    expect(user.content).toBe('What does it say?');
    expect(user.files).toHaveLength(2);
    expect(user.files[0]).toMatchObject({
      type: 'file', id: 'f1', name: 'notes.txt', url: '/api/v1/files/f1', status: 'uploaded', size: 11, error: '',
      file: { id: 'f1', filename: 'notes.txt' },
    });
    expect(typeof user.files[0].itemId).toBe('string');
    expect(user.files[1]).toMatchObject({ type: 'collection', id: 'k1', name: 'Handbook', status: 'processed' });
    const comp = calls.find((c) => c.url === '/api/chat/completions')!.body;
    expect(comp.files.map((f: any) => [f.type, f.id])).toEqual([['file', 'f1'], ['collection', 'k1']]);
    expect(comp.messages).toEqual([{ role: 'user', content: 'What does it say?' }]);
    // The composer is empty again; the message shows its attachments, the file opening its content.
    expect(document.querySelectorAll('.composer .chip')).toHaveLength(0);
    const link = $('.msg.user a.open') as HTMLAnchorElement;
    expect(link.getAttribute('href')).toBe('/api/v1/files/f1/content');
    expect(link.getAttribute('target')).toBe('_blank');
    expect($('.msg.user .files')?.textContent).toContain('Handbook');

    // A follow-up turn sends the thread's files again (the server retrieves per request).
    const ev = (seq: number, data: unknown) => FakeWS.last.push({ type: 'events', seq, chat_id: 'c1', message_id: asst.id, data });
    ev(1, { type: 'chat:completion', data: { content: 'It says hello.', done: true } });
    await settle();
    type('And then?');
    sendButton().click();
    await settle();
    const second = calls.filter((c) => c.url === '/api/chat/completions').pop()!.body;
    expect(second.files.map((f: any) => f.id)).toEqual(['f1', 'k1']);

    // Editing the first question brings its attachments back into the composer; cancelling drops them.
    FakeWS.last.push({ type: 'events', seq: 1, chat_id: 'c1', message_id: second.id, data: { type: 'chat:completion', data: { content: 'Then bye.', done: true } } });
    await settle();
    ([...document.querySelectorAll('.msg.user .meta button')].find((b) => b.textContent === 'Edit') as HTMLButtonElement).click();
    await settle();
    expect(chipText()).toEqual(['notes.txt 11 B', 'Handbook Collection']);
    ($('.composer textarea') as HTMLElement).dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
    await settle();
    expect(chipText()).toEqual([]);
    // The message's own file is not deleted by dropping it from the draft.
    expect(calls.some((c) => c.method === 'DELETE')).toBe(false);
    unmount(app);
  });

  it('shows the server’s reason when an upload or its processing fails, and leaves failed files out', async () => {
    const status = sse();
    let uploads = 0;
    const { app, calls } = await start((method, url) => {
      if (method === 'POST' && url === '/api/v1/files/') {
        uploads++;
        return uploads === 1
          ? json(400, { detail: '[ERROR: File type exe is not allowed]' })
          : json(200, record('f2', 'scan.pdf'));
      }
      if (url === '/api/v1/files/f2/process/status?stream=true') return status.response();
      if (method === 'DELETE' && url === '/api/v1/files/f2') return json(200, { message: 'File deleted successfully' });
    });
    pick(new File(['MZ'], 'tool.exe'));
    await settle();
    expect(chipText()).toEqual(['tool.exe 2 B · Failed [ERROR: File type exe is not allowed]']);
    expect($('.composer .chip [role=alert]')?.textContent).toBe('[ERROR: File type exe is not allowed]');

    pick(new File(['%PDF'], 'scan.pdf'));
    await settle();
    status.send({ status: 'failed', error: 'The content provided is empty.' });
    status.end();
    await settle();
    expect(chipText()[1]).toBe('scan.pdf 4 B · Failed The content provided is empty.');
    // Nothing ready to send: failed files do not count.
    expect(sendButton().disabled).toBe(true);

    // Removing an uploaded file deletes it on the server.
    ($('button[aria-label="Remove scan.pdf"]') as HTMLButtonElement).click();
    await settle();
    expect(chipText()).toHaveLength(1);
    expect(calls.some((c) => c.method === 'DELETE' && c.url === '/api/v1/files/f2')).toBe(true);
    unmount(app);
  });

  it('attaches pasted files', async () => {
    const { app, calls } = await start((method, url) => {
      if (method === 'POST' && url === '/api/v1/files/') return json(200, record('f3', 'shot.txt'));
      if (url === '/api/v1/files/f3/process/status?stream=true') {
        const s = sse();
        s.send({ status: 'completed' });
        return s.response();
      }
    });
    const ta = $('.composer textarea')!;
    const e = new Event('paste', { bubbles: true, cancelable: true });
    Object.defineProperty(e, 'clipboardData', { value: { files: [new File(['x'], 'shot.txt')] } });
    ta.dispatchEvent(e);
    await settle();
    expect(e.defaultPrevented).toBe(true);
    expect(calls.filter((c) => c.url === '/api/v1/files/')).toHaveLength(1);
    expect(chipText()).toEqual(['shot.txt 1 B']);
    unmount(app);
  });
});

describe('sources', () => {
  it('shows the sources of a chat:completion event as numbered chips that open their passages as text', async () => {
    const { app } = await start((method, url, body) => {
      if (url === '/api/v1/chats/new') return json(200, { id: 'c1', title: 'New Chat', chat: body.chat });
      if (url === '/api/chat/completions') return json(200, { status: true, task_ids: ['t'], chat_id: 'c1' });
    });
    type('Where do chats live?');
    sendButton().click();
    await settle();
    const ev = (seq: number, data: unknown) =>
      FakeWS.last.push({ type: 'events', seq, chat_id: 'c1', message_id: assistantId(), data });
    const src = (id: string, name: string, docs: string[]) => ({
      source: { type: 'file', id, name }, document: docs, metadata: docs.map(() => ({ source: id, name })),
    });
    ev(1, { type: 'chat:completion', data: { sources: [src('f1', 'notes.txt', ['Chats live in <b>SQLite</b>.']), src('f2', 'guide.md', ['Backups nightly.'])] } });
    ev(2, { type: 'chat:completion', data: { content: 'In SQLite [1].', done: true } });
    await settle();
    const chips = [...document.querySelectorAll('.sources button.chip')] as HTMLButtonElement[];
    expect(chips.map((c) => c.textContent)).toEqual(['1notes.txt', '2guide.md']);
    expect(chips[0].getAttribute('aria-expanded')).toBe('false');
    chips[0].click();
    flushSync();
    expect(chips[0].getAttribute('aria-expanded')).toBe('true');
    const panel = $('.sources [role=region]')!;
    expect(panel.querySelector('.snippet')?.textContent).toBe('Chats live in <b>SQLite</b>.');
    expect(panel.querySelector('b')).toBeNull();
    // A later source event (a tool's) adds a chip.
    ev(3, { type: 'source', data: { source: { name: 'Example', url: 'https://example.com/' }, document: ['Example'], metadata: [{ source: 'https://example.com/', name: 'Example' }] } });
    flushSync();
    expect([...document.querySelectorAll('.sources button.chip')].map((c) => c.textContent)).toEqual(['1notes.txt', '2guide.md', '3Example']);
    unmount(app);
  });
});

/** The id of the answer being generated (the completion request names it). */
function assistantId(): string {
  const calls = (fetch as unknown as { mock: { calls: [string, RequestInit?][] } }).mock.calls;
  const c = calls.filter(([u]) => u === '/api/chat/completions').pop()!;
  return JSON.parse(c[1]!.body as string).id;
}

describe('helpers', () => {
  it('groups chunks by document and numbers the documents in order', () => {
    const g = groupSources([
      { source: { id: 'k1', name: 'Handbook' }, document: ['a', 'b', 'c'], metadata: [{ source: 'f1', name: 'one.md' }, { source: 'f2', name: 'two.md' }, { source: 'f1', name: 'one.md' }] },
      { source: { id: 'f3', name: 'three.txt' }, document: ['d'], metadata: [{}] },
      null,
    ]);
    expect(g.map((x) => [x.name, x.snippets])).toEqual([['one.md', ['a', 'c']], ['two.md', ['b']], ['three.txt', ['d']]]);
    expect(groupSources([{ source: { url: 'javascript:alert(1)' }, document: ['x'], metadata: [{ source: 'javascript:alert(1)' }] }])[0].url).toBeUndefined();
  });

  it('collects the request files of a thread once each, without failed files', () => {
    const f = (id: string, extra = {}) => ({ type: 'file', id, name: id, status: 'uploaded', ...extra });
    expect(requestFiles([
      { role: 'user', files: [f('a'), f('b', { status: 'failed' })] },
      { role: 'assistant', files: [f('c')] },
      { role: 'user', files: [f('a'), { type: 'collection', id: 'k', name: 'K', status: 'processed' }] },
    ]).map((x) => x.id)).toEqual(['a', 'k']);
  });

  it('reads a status stream split anywhere, and a stream that ends without a verdict', async () => {
    const chunks = ['data: {"status":"pen', 'ding"}\n', '\ndata: {"status":"failed","error":"Bad PDF"}\n\n'];
    vi.stubGlobal('fetch', vi.fn(async () => new Response(new ReadableStream({
      start(c) {
        for (const s of chunks) c.enqueue(new TextEncoder().encode(s));
        c.close();
      },
    }))));
    expect(await waitProcessed('x')).toEqual({ status: 'failed', error: 'Bad PDF' });
    vi.stubGlobal('fetch', vi.fn(async () => new Response('')));
    expect(await waitProcessed('x')).toEqual({ status: 'completed' });
    expect(formatSize(1536)).toBe('1.5 KB');
    expect(formatSize(5 * 1024 * 1024)).toBe('5.0 MB');
  });
});
