import { expect, it, vi } from 'vitest';
import { pickDefault } from './prefs';

const models = [{ id: 'nomic-embed-text' }, { id: 'llama3' }, { id: 'qwen3' }];

it('prefers DEFAULT_MODELS, then the last used, then pinned, then a chat model', () => {
  expect(pickDefault(models, 'missing, qwen3', ['llama3'], 'llama3')).toBe('qwen3');
  expect(pickDefault(models, '', ['qwen3'], 'llama3')).toBe('llama3');
  expect(pickDefault(models, '', ['qwen3'], 'gone')).toBe('qwen3');
  expect(pickDefault(models, '', [], '')).toBe('llama3'); // never an embedding model first
  expect(pickDefault([{ id: 'only-embed' }], '', [], '')).toBe('only-embed');
  expect(pickDefault([], 'x', [], '')).toBe('');
});

it('falls back to DEFAULT_PINNED_MODELS only for a user who never pinned', async () => {
  const { pinnedModels, resetPrefs } = await import('./prefs');
  const answer = (ui: unknown) =>
    vi.stubGlobal('fetch', vi.fn(async () => new Response(JSON.stringify(ui === undefined ? null : { ui }), { status: 200 })));
  answer(undefined);
  resetPrefs();
  expect(await pinnedModels('a, b')).toEqual(['a', 'b']);
  answer({ pinnedModels: [] });
  resetPrefs();
  expect(await pinnedModels('a, b')).toEqual([]); // unpinned everything on purpose
  answer({ pinnedModels: ['c'] });
  resetPrefs();
  expect(await pinnedModels('a')).toEqual(['c']);
  vi.unstubAllGlobals();
});
