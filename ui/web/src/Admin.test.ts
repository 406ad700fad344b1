// @vitest-environment happy-dom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import { json, stubFetch, tick } from './testing';
import Admin from './components/admin/Admin.svelte';
import Users from './components/admin/Users.svelte';
import Groups from './components/admin/Groups.svelte';
import ConnectionList from './components/admin/ConnectionList.svelte';
import Models from './components/admin/Models.svelte';
import General from './components/admin/General.svelte';

const settle = async () => {
  await tick();
  flushSync();
};

let app: Record<string, any> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = '';
  vi.unstubAllGlobals();
});

const $ = <T extends Element = HTMLElement>(sel: string) => document.querySelector(sel) as unknown as T;
const button = (text: string, root: ParentNode = document) =>
  [...root.querySelectorAll('button')].find((b) => b.textContent?.trim() === text) as HTMLButtonElement;
function type(el: HTMLInputElement | HTMLTextAreaElement, value: string) {
  el.value = value;
  el.dispatchEvent(new Event('input', { bubbles: true }));
  flushSync();
}
function choose(el: HTMLSelectElement, value: string) {
  el.value = value;
  el.dispatchEvent(new Event('change', { bubbles: true }));
  flushSync();
}

const me = { id: 'u1', name: 'Ann', email: 'ann@x.co', role: 'admin' };
const bob = { id: 'u2', name: 'Bob', email: 'bob@x.co', role: 'user', created_at: 1700000000 };

describe('admin users', () => {
  it('changes a role with the update call and puts the role back when the server refuses', async () => {
    let refuse = false;
    const calls = stubFetch((method, url) => {
      if (method === 'GET' && url.startsWith('/api/v1/users/?page=1')) return json(200, { users: [me, bob], total: 2 });
      if (method === 'POST' && url === '/api/v1/users/u2/update')
        return refuse ? json(403, { detail: 'Action prohibited' }) : json(200, { ...bob, role: 'admin' });
      return undefined;
    });
    app = mount(Users, { target: document.body, props: { me } });
    await settle();
    const role = $<HTMLSelectElement>('select[aria-label="Role of Bob"]');
    expect(role.value).toBe('user');

    choose(role, 'admin');
    await settle();
    expect(calls.filter((c) => c.method === 'POST')).toEqual([{ method: 'POST', url: '/api/v1/users/u2/update', body: { role: 'admin' } }]);
    expect($('[role=status]').textContent).toBe('Bob is now admin.');

    refuse = true;
    choose(role, 'pending');
    await settle();
    expect(calls.at(-1)!.body).toEqual({ role: 'pending' });
    expect($('[role=alert]').textContent).toBe('Action prohibited');
    expect(role.value).toBe('admin'); // what the server kept
  });

  it('deletes only after confirmation, never offers deleting yourself, and shows a refusal', async () => {
    let listed = [me, bob, { ...bob, id: 'u3', name: 'Cy', email: 'cy@x.co' }];
    const calls = stubFetch((method, url) => {
      if (method === 'GET' && url.startsWith('/api/v1/users/?page=1')) return json(200, { users: listed, total: listed.length });
      if (method === 'DELETE' && url === '/api/v1/users/u2') {
        listed = listed.filter((u) => u.id !== 'u2');
        return json(200, true);
      }
      if (method === 'DELETE' && url === '/api/v1/users/u3') return json(403, { detail: 'Action <b>prohibited</b>' });
      return undefined;
    });
    const answers = [false, true, true];
    const confirm = vi.fn(() => answers.shift()!);
    vi.stubGlobal('confirm', confirm);
    app = mount(Users, { target: document.body, props: { me } });
    await settle();
    expect($<HTMLButtonElement>('button[aria-label="Delete Ann"]').disabled).toBe(true);

    $<HTMLButtonElement>('button[aria-label="Delete Bob"]').click();
    await settle();
    expect(confirm).toHaveBeenCalledTimes(1);
    expect(calls.some((c) => c.method === 'DELETE')).toBe(false);

    $<HTMLButtonElement>('button[aria-label="Delete Bob"]').click();
    await settle();
    expect(calls.filter((c) => c.method === 'DELETE').map((c) => c.url)).toEqual(['/api/v1/users/u2']);
    expect($('button[aria-label="Delete Bob"]')).toBeNull(); // the list was reloaded

    $<HTMLButtonElement>('button[aria-label="Delete Cy"]').click();
    await settle();
    expect($('[role=alert]').textContent).toBe('Action <b>prohibited</b>'); // as text, not HTML
    expect($('[role=alert] b')).toBeNull();
  });

  it('adds a user through the admin add endpoint and keeps the form when it fails', async () => {
    let fail = true;
    const calls = stubFetch((method, url, body) => {
      if (method === 'GET' && url.startsWith('/api/v1/users/')) return json(200, { users: [me], total: 1 });
      if (method === 'POST' && url === '/api/v1/auths/add')
        return fail ? json(400, { detail: 'Email already registered' }) : json(200, { id: 'n', ...body });
      return undefined;
    });
    app = mount(Users, { target: document.body, props: { me } });
    await settle();
    button('Add user').click();
    flushSync();
    type($('input[name=add-name]'), 'Dee');
    type($('input[name=add-email]'), 'dee@x.co');
    type($('input[name=add-password]'), 'secret123');
    choose($('select[name=add-role]'), 'pending');
    const form = $<HTMLFormElement>('form[aria-label="Add user"]');
    form.dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }));
    await settle();
    expect(calls.find((c) => c.url === '/api/v1/auths/add')!.body).toEqual({ name: 'Dee', email: 'dee@x.co', password: 'secret123', role: 'pending' });
    expect(form.querySelector('[role=alert]')!.textContent).toBe('Email already registered');
    expect($<HTMLInputElement>('input[name=add-email]').value).toBe('dee@x.co');

    fail = false;
    form.dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }));
    await settle();
    expect($('form[aria-label="Add user"]')).toBeNull();
    expect($('[role=status]').textContent).toBe('Added Dee.');
  });
});

describe('admin groups', () => {
  it('saves name, members and permissions in one update', async () => {
    const group = { id: 'g1', name: 'Staff', description: '', permissions: null, user_ids: ['u1'], member_count: 1 };
    const calls = stubFetch((method, url, body) => {
      if (url === '/api/v1/groups/') return json(200, [group]);
      if (url === '/api/v1/users/all') return json(200, { users: [me, bob], total: 2 });
      if (url === '/api/v1/users/default/permissions') return json(200, { workspace: { models: false }, chat: { edit: true } });
      if (method === 'POST' && url === '/api/v1/groups/id/g1/update') return json(200, { ...group, ...body, member_count: body.user_ids.length });
      return undefined;
    });
    app = mount(Groups, { target: document.body });
    await settle();
    button('Edit').click();
    await settle();
    type($('input[name=edit-group-name]'), 'Editors');
    const bobBox = [...document.querySelectorAll('.picker label')].find((l) => l.textContent?.includes('Bob'))!.querySelector('input')!;
    bobBox.click();
    $<HTMLInputElement>('input[name="perm-workspace.models"]').click();
    flushSync();
    expect(document.body.textContent).toContain('(default on)'); // chat.edit
    button('Save group').click();
    await settle();
    const post = calls.find((c) => c.url === '/api/v1/groups/id/g1/update')!;
    expect(post.body).toEqual({ name: 'Editors', description: '', user_ids: ['u1', 'u2'], permissions: { workspace: { models: true } } });
    expect($('[role=status]').textContent).toBe('Saved Editors.');
    expect(document.body.textContent).toContain('2 members');
  });
});

describe('admin connections', () => {
  const openai = {
    ENABLE_OPENAI_API: true,
    OPENAI_API_BASE_URLS: ['https://a.example/v1', 'https://b.example/v1'],
    OPENAI_API_KEYS: ['sk-aaa', 'sk-bbb'],
    OPENAI_API_CONFIGS: { '0': { enable: true, tags: [{ name: 't' }], model_ids: ['m1'] }, '1': { enable: false, prefix_id: 'b' } },
  };

  it('masks keys, verifies a row and shows ok or the error detail', async () => {
    const calls = stubFetch((method, url, body) => {
      if (url === '/openai/config') return json(200, openai);
      if (method === 'POST' && url === '/openai/verify')
        return body.url.includes('a.example')
          ? json(200, { object: 'list', data: [{ id: 'x' }, { id: 'y' }] })
          : json(500, { detail: 'Server Connection Error: connection refused' });
      return undefined;
    });
    app = mount(ConnectionList, { target: document.body, props: { kind: 'openai', onconfig: () => {} } });
    await settle();
    const keys = [...document.querySelectorAll<HTMLInputElement>('input[name=openai-key]')];
    expect(keys.map((k) => [k.type, k.value])).toEqual([['password', 'sk-aaa'], ['password', 'sk-bbb']]);
    $<HTMLButtonElement>('button[aria-label="Show key"]').click();
    flushSync();
    expect(keys[0].type).toBe('text');

    const verify = [...document.querySelectorAll('button')].filter((b) => b.textContent === 'Verify');
    verify[0].click();
    verify[1].click();
    await settle();
    const posted = calls.filter((c) => c.url === '/openai/verify').map((c) => c.body);
    expect(posted[0]).toMatchObject({ url: 'https://a.example/v1', key: 'sk-aaa' });
    expect(posted[1]).toMatchObject({ url: 'https://b.example/v1', key: 'sk-bbb', config: { prefix_id: 'b' } });
    const results = [...document.querySelectorAll('.verify')].map((p) => p.textContent);
    expect(results).toEqual(['Connected · 2 model(s)', 'Server Connection Error: connection refused']);
  });

  it('saves urls, keys and re-indexed configs, keeping fields it does not edit', async () => {
    let fail = true;
    const onconfig = vi.fn();
    const calls = stubFetch((method, url, body) => {
      if (url === '/openai/config') return json(200, openai);
      if (method === 'POST' && url === '/openai/config/update')
        return fail ? json(422, { detail: 'OPENAI_API_BASE_URLS: invalid value' }) : json(200, { ...body });
      return undefined;
    });
    app = mount(ConnectionList, { target: document.body, props: { kind: 'openai', onconfig } });
    await settle();
    $<HTMLButtonElement>('button[aria-label="Remove connection 1"]').click(); // drop a.example
    button('Add connection').click();
    flushSync();
    const urls = document.querySelectorAll<HTMLInputElement>('input[name=openai-url]');
    type(urls[1], 'http://local:8000/v1/');
    type(document.querySelectorAll<HTMLInputElement>('input[name=openai-key]')[1], 'sk-new');
    type(document.querySelectorAll<HTMLInputElement>('input[name=openai-prefix]')[0], '');
    document.querySelectorAll<HTMLInputElement>('input[name=openai-row-enable]')[0].click();
    $<HTMLInputElement>('input[name=openai-enable]').click(); // the kind's switch off
    flushSync();
    button('Save OpenAI').click();
    await settle();
    const post = calls.find((c) => c.url === '/openai/config/update')!;
    expect(post.body).toEqual({
      ENABLE_OPENAI_API: false,
      OPENAI_API_BASE_URLS: ['https://b.example/v1', 'http://local:8000/v1/'],
      OPENAI_API_KEYS: ['sk-bbb', 'sk-new'],
      OPENAI_API_CONFIGS: { '0': { enable: true }, '1': { enable: true } },
    });
    expect($('[role=alert]').textContent).toBe('OPENAI_API_BASE_URLS: invalid value');
    expect(onconfig).not.toHaveBeenCalled();
    expect(document.querySelectorAll<HTMLInputElement>('input[name=openai-url]')[1].value).toBe('http://local:8000/v1/'); // kept

    fail = false;
    button('Save OpenAI').click();
    await settle();
    expect($('[role=status]').textContent).toBe('Saved.');
    expect(onconfig).toHaveBeenCalledTimes(1);
  });

  it('keeps an Ollama key in the connection config', async () => {
    const calls = stubFetch((method, url, body) => {
      if (url === '/ollama/config') return json(200, { ENABLE_OLLAMA_API: true, OLLAMA_BASE_URLS: ['http://o:11434'], OLLAMA_API_CONFIGS: { '0': { key: 'k0', tags: [] } } });
      if (method === 'POST' && url === '/ollama/verify') return json(200, { version: '0.9.1' });
      if (method === 'POST' && url === '/ollama/config/update') return json(200, body);
      return undefined;
    });
    app = mount(ConnectionList, { target: document.body, props: { kind: 'ollama', onconfig: () => {} } });
    await settle();
    expect($<HTMLInputElement>('input[name=ollama-key]').value).toBe('k0');
    button('Verify').click();
    await settle();
    expect(calls.find((c) => c.url === '/ollama/verify')!.body).toEqual({ url: 'http://o:11434', key: 'k0' });
    expect($('.verify').textContent).toBe('Connected · Ollama 0.9.1');
    button('Save Ollama').click();
    await settle();
    expect(calls.find((c) => c.url === '/ollama/config/update')!.body).toEqual({
      ENABLE_OLLAMA_API: true, OLLAMA_BASE_URLS: ['http://o:11434'], OLLAMA_API_CONFIGS: { '0': { key: 'k0', tags: [], enable: true } },
    });
  });
});

describe('admin models', () => {
  it('creates a private preset with group grants and unset params left out', async () => {
    const onconfig = vi.fn();
    const calls = stubFetch((method, url, body) => {
      if (url === '/api/v1/models/list?page=1') return json(200, { items: [], total: 0 });
      if (url === '/api/models/base') return json(200, { data: [{ id: 'gpt-x', name: 'GPT X', owned_by: 'openai' }, { id: 'llama', owned_by: 'ollama' }] });
      if (url === '/api/v1/groups/') return json(200, [{ id: 'g1', name: 'Staff', description: '', permissions: null, member_count: 0 }, { id: 'g2', name: 'Ops', description: '', permissions: null, member_count: 0 }]);
      if (method === 'POST' && url === '/api/v1/models/create') return json(200, { ...body, user_id: 'u1' });
      return undefined;
    });
    app = mount(Models, { target: document.body, props: { onconfig } });
    await settle();
    button('New model').click();
    await settle();
    type($('input[name=model-id]'), 'helper');
    type($('input[name=model-name]'), 'Helper');
    choose($('select[name=model-base]'), 'llama');
    type($('textarea[name=model-system]'), 'Be brief.');
    type($('input[name=param-temperature]'), '0.35');
    type($('input[name=param-max_tokens]'), '512');
    $<HTMLInputElement>('input[name=model-visibility][value=private]').click();
    flushSync();
    $<HTMLInputElement>('input[aria-label="Staff may use"]').click();
    $<HTMLInputElement>('input[aria-label="Ops may edit"]').click(); // write implies read
    flushSync();
    button('Create model').click();
    await settle();
    const post = calls.find((c) => c.url === '/api/v1/models/create')!;
    expect(post.body).toEqual({
      id: 'helper',
      name: 'Helper',
      base_model_id: 'llama',
      meta: { description: null },
      params: { system: 'Be brief.', temperature: 0.35, max_tokens: 512 },
      access_grants: [
        { principal_type: 'group', principal_id: 'g1', permission: 'read' },
        { principal_type: 'group', principal_id: 'g2', permission: 'read' },
        { principal_type: 'group', principal_id: 'g2', permission: 'write' },
      ],
      is_active: true,
    });
    expect(onconfig).toHaveBeenCalledTimes(1);
    expect($('[aria-label="Model records"]').textContent).toContain('Helper');
  });

  it('edits a record keeping unknown params and meta, public access and user grants', async () => {
    const rec = {
      id: 'gpt-x', name: 'GPT X', base_model_id: null, is_active: true,
      params: { temperature: 0.7, custom_params: { a: 1 } },
      meta: { profile_image_url: '/p.png', description: 'Old', tags: [{ name: 't' }] },
      access_grants: [{ principal_type: 'user', principal_id: '*', permission: 'read' }, { principal_type: 'user', principal_id: 'u9', permission: 'write' }],
    };
    const calls = stubFetch((method, url, body) => {
      if (url === '/api/v1/models/list?page=1') return json(200, { items: [{ ...rec, meta: { description: 'Old' } }], total: 1 });
      if (url === '/api/models/base') return json(200, { data: [{ id: 'gpt-x', name: 'GPT X' }] });
      if (url === '/api/v1/groups/') return json(200, []);
      if (url === '/api/v1/models/model?id=gpt-x') return json(200, rec);
      if (method === 'POST' && url === '/api/v1/models/model/update') return json(400, { detail: 'Access prohibited' });
      return undefined;
    });
    app = mount(Models, { target: document.body, props: { onconfig: () => {} } });
    await settle();
    button('Edit').click();
    await settle();
    expect($<HTMLInputElement>('input[name=model-id]').disabled).toBe(true);
    type($('input[name=param-temperature]'), '');
    type($('input[name=model-description]'), 'New');
    button('Save model').click();
    await settle();
    expect(calls.find((c) => c.url === '/api/v1/models/model/update')!.body).toEqual({
      id: 'gpt-x', name: 'GPT X', base_model_id: null,
      meta: { profile_image_url: '/p.png', description: 'New', tags: [{ name: 't' }] },
      params: { custom_params: { a: 1 } },
      access_grants: [{ principal_type: 'user', principal_id: 'u9', permission: 'write' }, { principal_type: 'user', principal_id: '*', permission: 'read' }],
      is_active: true,
    });
    expect($('form [role=alert]').textContent).toBe('Access prohibited');
    expect($<HTMLInputElement>('input[name=model-description]').value).toBe('New'); // kept after the failure
  });
});

describe('admin general settings', () => {
  const rows = [
    { name: 'WEBUI_NAME', key: 'ui.name', value: 'Hearth', source: 'default', persistent: true, stored: true, secret: false, restart_needed: false, section: 'general', type: 'string', description: 'Main display name.' },
    { name: 'ENABLE_SIGNUP', key: 'ui.enable_signup', value: true, source: 'default', persistent: true, stored: true, secret: false, restart_needed: false, section: 'general', type: 'bool', description: '' },
    { name: 'DEFAULT_USER_ROLE', key: 'ui.default_user_role', value: 'pending', source: 'default', persistent: true, stored: true, secret: false, restart_needed: false, section: 'general', type: 'enum', enum: ['pending', 'user', 'admin'], description: '' },
    { name: 'FOLDER_MAX_FILE_COUNT', key: 'folders.max', value: '', source: 'default', persistent: true, stored: true, secret: false, restart_needed: false, section: 'general', type: 'optional_int', description: '' },
    { name: 'DEFAULT_MODEL_PARAMS', key: 'models.default_params', value: { temperature: 1 }, source: 'default', persistent: true, stored: true, secret: false, restart_needed: false, section: 'general', type: 'json', description: '' },
    { name: 'OAUTH_CLIENT_SECRET', key: 'oauth.secret', value: null, is_set: true, source: 'default', persistent: true, stored: true, secret: true, restart_needed: false, section: 'oauth', type: 'string', description: '' },
    { name: 'USER_PERMISSIONS', key: 'user.permissions', value: { chat: { edit: true, share: false } }, source: 'default', persistent: true, stored: true, secret: false, restart_needed: false, section: 'permissions', type: 'permissions', description: '' },
    { name: 'PORT', key: '', value: 8080, source: 'env', persistent: false, stored: false, secret: false, restart_needed: false, section: 'server', type: 'int', description: '' },
    { name: 'OPENAI_API_CONFIGS', key: 'openai.api_configs', value: {}, source: 'default', persistent: true, stored: true, secret: false, restart_needed: false, section: 'connections', type: 'json', description: '' },
  ];

  it('lists the persistent settings and sends only the changed ones', async () => {
    let fail = true;
    const onconfig = vi.fn();
    const calls = stubFetch((method, url, body) => {
      if (method === 'GET' && url === '/api/v1/configs/settings') return json(200, rows);
      if (method === 'POST' && url === '/api/v1/configs/settings')
        return fail ? json(400, { detail: 'DEFAULT_USER_ROLE: invalid value' }) : json(200, rows.map((r) => (r.name in body ? { ...r, value: body[r.name] } : r)));
      return undefined;
    });
    app = mount(General, { target: document.body, props: { onconfig } });
    await settle();
    expect($('[name=PORT]')).toBeNull(); // env-only
    expect($('[name=OPENAI_API_CONFIGS]')).toBeNull(); // edited under Connections
    expect($<HTMLInputElement>('input[name=OAUTH_CLIENT_SECRET]').type).toBe('password');
    expect($<HTMLInputElement>('input[name=OAUTH_CLIENT_SECRET]').value).toBe('');
    const save = () => [...document.querySelectorAll('button')].find((b) => b.textContent?.trim().startsWith('Save'))!;
    expect(save().disabled).toBe(true);

    $<HTMLInputElement>('input[name=ENABLE_SIGNUP]').click();
    choose($('select[name=DEFAULT_USER_ROLE]'), 'user');
    type($('input[name=FOLDER_MAX_FILE_COUNT]'), '12');
    type($('input[name=WEBUI_NAME]'), 'Hearth'); // typed back to the stored value: not a change
    const params = $<HTMLTextAreaElement>('textarea[name=DEFAULT_MODEL_PARAMS]');
    type(params, '{"temperature": ');
    expect(document.body.textContent).toContain('Not valid JSON.');
    expect(save().disabled).toBe(true);
    type(params, '{"temperature": 0.5}');
    expect($<HTMLInputElement>('input[name="perm-chat.edit"]').checked).toBe(true);
    expect(save().textContent?.trim()).toBe('Save 4 changes');

    save().click();
    await settle();
    const post = calls.find((c) => c.method === 'POST')!;
    expect(post.body).toEqual({ ENABLE_SIGNUP: false, DEFAULT_USER_ROLE: 'user', FOLDER_MAX_FILE_COUNT: 12, DEFAULT_MODEL_PARAMS: { temperature: 0.5 } });
    expect($('[role=alert]').textContent).toBe('DEFAULT_USER_ROLE: invalid value');
    expect($<HTMLSelectElement>('select[name=DEFAULT_USER_ROLE]').value).toBe('user'); // nothing lost
    expect(onconfig).not.toHaveBeenCalled();

    fail = false;
    type($('input[name=OAUTH_CLIENT_SECRET]'), 'shh');
    $<HTMLInputElement>('input[name="perm-chat.share"]').click();
    flushSync();
    save().click();
    await settle();
    expect(calls.filter((c) => c.method === 'POST').at(-1)!.body).toEqual({
      ENABLE_SIGNUP: false, DEFAULT_USER_ROLE: 'user', FOLDER_MAX_FILE_COUNT: 12, DEFAULT_MODEL_PARAMS: { temperature: 0.5 }, OAUTH_CLIENT_SECRET: 'shh',
      USER_PERMISSIONS: { chat: { edit: true, share: true } },
    });
    expect($('[role=status]').textContent).toContain('Saved ENABLE_SIGNUP');
    expect(onconfig).toHaveBeenCalledTimes(1);
    expect(save().disabled).toBe(true); // the saved values are the new baseline
  });
});

describe('admin dialog', () => {
  it('opens on Users, switches tabs with the keyboard and closes on Escape', async () => {
    stubFetch((_m, url) => {
      if (url.startsWith('/api/v1/users/?')) return json(200, { users: [me], total: 1 });
      if (url === '/api/v1/groups/') return json(200, []);
      if (url === '/api/v1/users/all') return json(200, { users: [me], total: 1 });
      if (url === '/api/v1/users/default/permissions') return json(200, {});
      return undefined;
    });
    const onclose = vi.fn();
    app = mount(Admin, { target: document.body, props: { config: { name: 'Hearth', features: {} }, user: me, onclose, onconfig: () => {} } });
    await settle();
    const tabs = [...document.querySelectorAll<HTMLButtonElement>('[role=tab]')];
    expect(tabs.map((t) => t.textContent)).toEqual(['Users', 'Groups', 'Connections', 'Models', 'General', 'Banners']);
    expect(tabs[0].getAttribute('aria-selected')).toBe('true');
    expect($('#admin-panel-groups')).toBeNull(); // mounted on first visit only

    tabs[0].dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowDown', bubbles: true }));
    await settle();
    expect(tabs[1].getAttribute('aria-selected')).toBe('true');
    expect($<HTMLElement>('#admin-panel-groups').hidden).toBe(false);
    expect($<HTMLElement>('#admin-panel-users').hidden).toBe(true); // kept, hidden

    window.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape' }));
    expect(onclose).toHaveBeenCalled();
  });
});
