import { describe, expect, it } from 'vitest';
import {
  addRegeneration, addTurn, emptyHistory, leafOf, promptMessages, siblings, switchSibling, thread,
} from './tree';

function twoTurns() {
  let r = addTurn(emptyHistory(), { userId: 'u1', assistantId: 'a1', content: 'hi', model: 'm', now: 1 });
  const h1 = { ...r.history, messages: { ...r.history.messages, a1: { ...r.history.messages.a1, content: 'hello', done: true } } };
  r = addTurn(h1, { userId: 'u2', assistantId: 'a2', content: 'more', model: 'm', now: 2 });
  return r;
}

describe('addTurn', () => {
  it('creates a linked user message and empty assistant placeholder', () => {
    const { history, changed } = addTurn(emptyHistory(), { userId: 'u1', assistantId: 'a1', content: 'hi', model: 'm', now: 5 });
    expect(history.currentId).toBe('a1');
    expect(history.messages.u1).toMatchObject({ parentId: null, childrenIds: ['a1'], role: 'user', content: 'hi', models: ['m'] });
    expect(history.messages.a1).toMatchObject({ parentId: 'u1', childrenIds: [], role: 'assistant', content: '', model: 'm', done: false });
    expect(Object.keys(changed).sort()).toEqual(['a1', 'u1']);
  });

  it('links a follow-up under the previous assistant and reports the changed parent', () => {
    const { history, changed } = twoTurns();
    expect(history.messages.a1.childrenIds).toEqual(['u2']);
    expect(history.messages.u2.parentId).toBe('a1');
    expect(Object.keys(changed).sort()).toEqual(['a1', 'a2', 'u2']);
    expect(changed.a1.content).toBe('hello');
    expect(history.currentId).toBe('a2');
  });

  it('does not mutate its input', () => {
    const h = addTurn(emptyHistory(), { userId: 'u1', assistantId: 'a1', content: 'x', model: 'm' }).history;
    const before = JSON.stringify(h);
    addTurn(h, { userId: 'u2', assistantId: 'a2', content: 'y', model: 'm' });
    expect(JSON.stringify(h)).toBe(before);
  });
});

describe('thread and siblings', () => {
  it('walks from currentId to the root', () => {
    const { history } = twoTurns();
    expect(thread(history).map((m) => m.id)).toEqual(['u1', 'a1', 'u2', 'a2']);
  });

  it('survives a cycle and a dangling currentId', () => {
    const h = { currentId: 'x', messages: {
      x: { id: 'x', parentId: 'y', childrenIds: [], role: 'user', content: '', timestamp: 0 },
      y: { id: 'y', parentId: 'x', childrenIds: [], role: 'user', content: '', timestamp: 0 },
    } };
    expect(thread(h).map((m) => m.id)).toEqual(['y', 'x']);
    expect(thread({ ...h, currentId: 'missing' })).toEqual([]);
  });

  it('edit as a sibling branch and navigate between branches', () => {
    const { history } = twoTurns();
    // edit u2: a new user message under a1
    const edited = addTurn(history, { userId: 'u2b', assistantId: 'a2b', content: 'edited', model: 'm', parentId: 'a1' });
    expect(siblings(edited.history, 'u2')).toEqual(['u2', 'u2b']);
    expect(thread(edited.history).map((m) => m.id)).toEqual(['u1', 'a1', 'u2b', 'a2b']);
    const back = switchSibling(edited.history, 'u2b', -1);
    expect(back.currentId).toBe('a2');
    expect(switchSibling(back, 'u2', -1)).toBe(back);
    expect(leafOf(edited.history, 'u1')).toBe('a2b');
  });

  it('regenerate adds an assistant sibling', () => {
    const { history } = twoTurns();
    const r = addRegeneration(history, 'a2', 'a2r', 'm', 3);
    expect(siblings(r.history, 'a2')).toEqual(['a2', 'a2r']);
    expect(r.history.currentId).toBe('a2r');
    expect(Object.keys(r.changed).sort()).toEqual(['a2r', 'u2']);
  });

  it('roots are siblings of each other', () => {
    const a = addTurn(emptyHistory(), { userId: 'u1', assistantId: 'a1', content: 'x', model: 'm' }).history;
    const b = addTurn(a, { userId: 'u9', assistantId: 'a9', content: 'y', model: 'm', parentId: null }).history;
    expect(siblings(b, 'u9')).toEqual(['u1', 'u9']);
  });
});

describe('promptMessages', () => {
  it('lists the thread before the placeholder', () => {
    const { history } = twoTurns();
    expect(promptMessages(history, 'a2')).toEqual([
      { role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }, { role: 'user', content: 'more' },
    ]);
  });
});
