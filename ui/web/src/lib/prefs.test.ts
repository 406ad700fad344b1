import { expect, it } from 'vitest';
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
