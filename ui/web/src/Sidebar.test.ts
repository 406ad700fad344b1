// @vitest-environment happy-dom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import { json, stubFetch as stubWith, tick, type Handler } from './testing';
import Sidebar from './components/Sidebar.svelte';
import { CHAT_MIME } from './components/sidebar/dnd';

// Folders: Work (open, holds "In work") with Sub (closed) inside.
const FOLDERS = [
  { id: 'f1', parent_id: null, name: 'Work', is_expanded: true },
  { id: 'f2', parent_id: 'f1', name: 'Sub', is_expanded: false },
];
const base: Handler = (method, url) => {
  if (method === 'GET' && url === '/api/v1/folders/') return json(200, FOLDERS);
  if (method === 'GET' && url === '/api/v1/chats/folder/f1/list?page=1') return json(200, [{ id: 'w1', title: 'In work', updated_at: 3 }]);
  if (method === 'GET' && url === '/api/v1/chats/folder/f2/list?page=1') return json(200, []);
  if (method === 'GET' && url === '/api/v1/chats/all/tags') return json(200, [{ id: 'work', name: 'work' }, { id: 'ideas', name: 'ideas' }]);
  return undefined;
};

/** Stubs fetch: the test's handler first, then the folder/tag answers above. */
function stubFetch(handler: Handler) {
  return stubWith((method, url, body) => handler(method, url, body) ?? base(method, url, body));
}

let cmp: Record<string, any> | null = null;
afterEach(() => {
  if (cmp) unmount(cmp);
  cmp = null;
  document.body.innerHTML = '';
  vi.unstubAllGlobals();
});

async function render(handler: Handler = () => undefined) {
  const calls = stubFetch(handler);
  const props = {
    name: 'Hearth',
    chats: [
      { id: 'a', title: 'Alpha', updated_at: 2, created_at: 1 },
      { id: 'b', title: 'Beta', updated_at: 1, created_at: 1 },
    ],
    pinned: [],
    current: null,
    user: { name: 'Ann', role: 'user' },
    more: false,
    onnew: vi.fn(),
    onselect: vi.fn(),
    onmore: vi.fn(),
    onsignout: vi.fn(),
    onrename: vi.fn(),
    onpin: vi.fn(),
    onarchive: vi.fn(),
    ondelete: vi.fn(),
    onsettings: vi.fn(),
    onadmin: vi.fn(),
    onrefresh: vi.fn(),
  };
  cmp = mount(Sidebar, { target: document.body, props });
  await settle();
  return { calls, props };
}

async function settle() {
  await tick();
  flushSync();
}

const buttons = (root: ParentNode = document) => [...root.querySelectorAll('button')] as HTMLButtonElement[];
const button = (text: string, root: ParentNode = document) => {
  const b = buttons(root).find((x) => x.textContent?.trim() === text || x.getAttribute('aria-label') === text);
  if (!b) throw new Error(`no button ${text}`);
  return b;
};
const row = (title: string) => [...document.querySelectorAll('.chat-row')].find((r) => r.textContent?.includes(title))!;
function openMenu(title: string) {
  (row(title).querySelector('.more') as HTMLButtonElement).click();
  flushSync();
}
function type(input: HTMLInputElement, value: string) {
  input.value = value;
  input.dispatchEvent(new Event('input', { bubbles: true }));
  flushSync();
}
function drag(kind: string, target: Element, chatId?: string) {
  const e = new Event(kind, { bubbles: true, cancelable: true });
  const dt = new DataTransfer();
  if (chatId) dt.setData(CHAT_MIME, chatId);
  Object.defineProperty(e, 'dataTransfer', { value: dt });
  target.dispatchEvent(e);
  return e;
}
const folderHead = (name: string) =>
  [...document.querySelectorAll('.folder-head')].find((h) => h.querySelector('.name')?.textContent === name)!;

describe('sidebar folders', () => {
  it('lists nested folders with the open folder’s chats, opens a sub-folder and creates one', async () => {
    const { calls } = await render((method, url, body) => {
      if (method === 'POST' && url === '/api/v1/folders/') return json(200, { id: 'f3', parent_id: null, name: body.name, is_expanded: false });
      if (method === 'POST' && url === '/api/v1/folders/f2/update/expanded') return json(200, { ...FOLDERS[1], is_expanded: true });
      return undefined;
    });
    const work = folderHead('Work').closest('.folder')!;
    expect(folderHead('Work').querySelector('[aria-expanded]')?.getAttribute('aria-expanded')).toBe('true');
    // Sub is nested inside Work's body; Work's chat uses the same row.
    expect(work.querySelector('.folder-body .folder .name')?.textContent).toBe('Sub');
    expect(work.querySelector('.chat-row .chat-link')?.textContent?.trim()).toBe('In work');
    expect(calls.some((c) => c.url === '/api/v1/chats/folder/f2/list?page=1')).toBe(false); // closed: not loaded

    (folderHead('Sub').querySelector('.folder-toggle') as HTMLButtonElement).click();
    await settle();
    expect(calls.find((c) => c.url === '/api/v1/folders/f2/update/expanded')?.body).toEqual({ is_expanded: true });
    expect(calls.some((c) => c.url === '/api/v1/chats/folder/f2/list?page=1')).toBe(true);
    expect(folderHead('Sub').closest('.folder')?.textContent).toContain('Empty — drag chats here');

    button('New folder').click();
    flushSync();
    const input = document.querySelector('input[aria-label="New folder name"]') as HTMLInputElement;
    type(input, ' Ideas ');
    input.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
    await settle();
    expect(calls.find((c) => c.method === 'POST' && c.url === '/api/v1/folders/')?.body).toEqual({ name: 'Ideas' });
    expect([...document.querySelectorAll('.folder-head .name')].map((n) => n.textContent)).toContain('Ideas');
  });

  it('moves a chat into a folder from the row menu', async () => {
    const { calls, props } = await render((method, url) =>
      method === 'POST' && url === '/api/v1/chats/a/folder' ? json(200, { id: 'a' }) : undefined,
    );
    openMenu('Alpha');
    button('Move to folder…', row('Alpha')).click();
    flushSync();
    // The folder list shows both folders, the nested one indented.
    const items = buttons(row('Alpha').querySelector('.row-menu')!).map((b) => b.textContent?.trim());
    expect(items).toEqual(['‹ Back', 'No folder', 'Work', 'Sub']);
    expect(button('No folder', row('Alpha')).disabled).toBe(true); // already in no folder
    button('Sub', row('Alpha')).click();
    await settle();
    expect(calls.find((c) => c.url === '/api/v1/chats/a/folder')).toEqual({ method: 'POST', url: '/api/v1/chats/a/folder', body: { folder_id: 'f2' } });
    expect(props.onrefresh).toHaveBeenCalled();
    // Sub opened so the chat is seen to land there, and its chats were loaded.
    expect(calls.find((c) => c.url === '/api/v1/folders/f2/update/expanded')?.body).toEqual({ is_expanded: true });
    expect(calls.some((c) => c.url === '/api/v1/chats/folder/f2/list?page=1')).toBe(true);
  });

  it('a chat dropped on a folder moves there; dropped on "Chats" it leaves its folder', async () => {
    const { calls, props } = await render((method, url) =>
      method === 'POST' && /^\/api\/v1\/chats\/\w+\/folder$/.test(url) ? json(200, {}) : undefined,
    );
    // dragstart on a row puts the chat id in the DataTransfer.
    const start = new Event('dragstart', { bubbles: true });
    const dt = new DataTransfer();
    Object.defineProperty(start, 'dataTransfer', { value: dt });
    row('Beta').dispatchEvent(start);
    expect(dt.getData(CHAT_MIME)).toBe('b');

    const head = folderHead('Work');
    drag('dragenter', head, 'b');
    flushSync();
    expect(head.classList.contains('drop-over')).toBe(true); // visible drop highlight
    expect(drag('dragover', head, 'b').defaultPrevented).toBe(true); // accepts the drop
    drag('drop', head, 'b');
    await settle();
    expect(head.classList.contains('drop-over')).toBe(false);
    expect(calls.find((c) => c.url === '/api/v1/chats/b/folder')?.body).toEqual({ folder_id: 'f1' });
    expect(props.onrefresh).toHaveBeenCalledTimes(1);

    drag('drop', document.querySelector('.chats-head')!, 'w1');
    await settle();
    expect(calls.find((c) => c.url === '/api/v1/chats/w1/folder')?.body).toEqual({ folder_id: null });
    expect(props.onrefresh).toHaveBeenCalledTimes(2);

    // Something that is not a chat (text, files) is not taken.
    expect(drag('dragover', head).defaultPrevented).toBe(false);
    drag('drop', head);
    await settle();
    expect(calls.filter((c) => c.url.endsWith('/folder'))).toHaveLength(2);
  });

  it('deletes a folder keeping its chats when asked to', async () => {
    const { calls, props } = await render((method, url) =>
      method === 'DELETE' && url.startsWith('/api/v1/folders/f1') ? json(200, true) : undefined,
    );
    const head = folderHead('Work');
    button('Folder actions', head).click();
    flushSync();
    button('Delete', head).click();
    flushSync();
    const dialog = document.querySelector('[role=dialog]')!;
    expect(dialog.textContent).toContain('sub-folder is deleted too');
    button('Delete folder, keep chats', dialog).click();
    await settle();
    expect(calls.find((c) => c.method === 'DELETE')?.url).toBe('/api/v1/folders/f1?delete_contents=false');
    expect(document.querySelectorAll('.folder')).toHaveLength(0); // Sub went with it
    expect(props.onrefresh).toHaveBeenCalled();
  });

  it('hides folders when the server refuses them', async () => {
    await render((_m, url) => (url === '/api/v1/folders/' ? json(403, { detail: 'off' }) : undefined));
    expect(document.querySelector('.folder-head')).toBeNull();
    expect(document.body.textContent).not.toContain('Folders');
    openMenu('Alpha');
    expect(buttons(row('Alpha')).some((b) => b.textContent === 'Move to folder…')).toBe(false);
  });
});

describe('sidebar tags', () => {
  it('edits a chat’s tags: lists, adds and removes', async () => {
    const { calls } = await render((method, url, body) => {
      if (url !== '/api/v1/chats/a/tags') return undefined;
      if (method === 'GET') return json(200, [{ id: 'work', name: 'work' }]);
      if (method === 'POST') return json(200, [{ id: 'work', name: 'work' }, { id: 'urgent_one', name: body.name }]);
      if (method === 'DELETE') return json(200, [{ id: 'urgent_one', name: 'Urgent one' }]);
      return undefined;
    });
    openMenu('Alpha');
    button('Tags…', row('Alpha')).click();
    await settle();
    const dialog = document.querySelector('[role=dialog]')!;
    const shown = () => [...dialog.querySelectorAll('.tag span')].map((s) => s.textContent);
    expect(shown()).toEqual(['work']);

    type(dialog.querySelector('input[aria-label="New tag"]') as HTMLInputElement, 'Urgent one');
    (dialog.querySelector('form') as HTMLFormElement).dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }));
    await settle();
    expect(calls.find((c) => c.method === 'POST' && c.url === '/api/v1/chats/a/tags')?.body).toEqual({ name: 'Urgent one' });
    expect(shown()).toEqual(['work', 'Urgent one']);

    button('Remove tag work', dialog).click();
    await settle();
    expect(calls.find((c) => c.method === 'DELETE' && c.url === '/api/v1/chats/a/tags')?.body).toEqual({ name: 'work' });
    expect(shown()).toEqual(['Urgent one']);
  });

  it('a tag chip lists the chats with that tag; a second click clears it', async () => {
    const { calls } = await render((method, url) =>
      method === 'POST' && url === '/api/v1/chats/tags' ? json(200, [{ id: 'x', title: 'Tagged chat', updated_at: 1, created_at: 1 }]) : undefined,
    );
    await tick(450); // the tag list is read shortly after mount
    flushSync();
    const chip = button('#work');
    chip.click();
    await settle();
    expect(calls.find((c) => c.url === '/api/v1/chats/tags')?.body).toEqual({ name: 'work', skip: 0, limit: 50 });
    expect(chip.getAttribute('aria-pressed')).toBe('true');
    expect([...document.querySelectorAll('.chat-link')].map((b) => b.textContent?.trim())).toEqual(['Tagged chat']);

    chip.click();
    flushSync();
    expect(chip.getAttribute('aria-pressed')).toBe('false');
    expect([...document.querySelectorAll('.chat-link')].map((b) => b.textContent?.trim())).toContain('Alpha');
  });
});

describe('archived chats', () => {
  it('lists archived chats, unarchives one and then all', async () => {
    let archived = [
      { id: 'x', title: 'Old news', updated_at: 1700000000, created_at: 1 },
      { id: 'y', title: 'Older', updated_at: 1600000000, created_at: 1 },
    ];
    vi.stubGlobal('confirm', () => true);
    const { calls, props } = await render((method, url) => {
      if (method === 'GET' && url === '/api/v1/chats/archived?page=1') return json(200, archived);
      if (method === 'POST' && url === '/api/v1/chats/x/archive') {
        archived = archived.filter((c) => c.id !== 'x');
        return json(200, { id: 'x' });
      }
      if (method === 'POST' && url === '/api/v1/chats/unarchive/all') return json(200, true);
      return undefined;
    });
    button('Archived chats').click();
    await settle();
    const dialog = document.querySelector('[role=dialog]')!;
    expect([...dialog.querySelectorAll('.title')].map((b) => b.textContent)).toEqual(['Old news', 'Older']);

    const first = dialog.querySelector('li')!;
    button('Unarchive', first).click();
    await settle();
    expect(calls.some((c) => c.method === 'POST' && c.url === '/api/v1/chats/x/archive')).toBe(true);
    expect(props.onrefresh).toHaveBeenCalledTimes(1);
    expect([...dialog.querySelectorAll('.title')].map((b) => b.textContent)).toEqual(['Older']);

    button('Unarchive all', dialog).click();
    await settle();
    expect(calls.some((c) => c.method === 'POST' && c.url === '/api/v1/chats/unarchive/all')).toBe(true);
    expect(props.onrefresh).toHaveBeenCalledTimes(2);
    expect(dialog.textContent).toContain('No archived chats.');
  });
});
