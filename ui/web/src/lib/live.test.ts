import { describe, expect, it } from 'vitest';
import { Sequencer, isEnd } from './live';

const ev = (seq: number, content = `c${seq}`) => ({
  type: 'events', seq, chat_id: 'c', message_id: 'm',
  data: { type: 'chat:completion', data: { content } },
});

describe('Sequencer', () => {
  it('applies in-order events and ignores duplicates', () => {
    const s = new Sequencer();
    s.track('c', 'm');
    expect(s.live(ev(1)).action).toBe('apply');
    expect(s.live(ev(2)).action).toBe('apply');
    expect(s.live(ev(2)).action).toBe('ignore');
  });

  it('asks to resume once on a gap and applies the resumed events', () => {
    const s = new Sequencer();
    expect(s.live(ev(1)).action).toBe('apply');
    expect(s.live(ev(4))).toEqual({ action: 'resume', since: 1 });
    expect(s.live(ev(5)).action).toBe('ignore'); // resume pending
    const r = s.resumed({ type: 'resumed', chat_id: 'c', message_id: 'm', since: 1, seq: 5, found: true,
      events: [ev(3), ev(5)] });
    expect(r.apply.map((e) => e.seq)).toEqual([3, 5]);
    expect(s.live(ev(6)).action).toBe('apply');
  });

  it('reloads when the server kept nothing', () => {
    const s = new Sequencer();
    const r = s.resumed({ type: 'resumed', chat_id: 'c', message_id: 'm', since: 0, seq: 9, found: false });
    expect(r.reload).toBe(true);
    expect(s.live(ev(10)).action).toBe('apply');
  });

  it('restarts from the server since after a server restart', () => {
    const s = new Sequencer();
    s.live(ev(1)); s.live(ev(2)); s.live(ev(3));
    const r = s.resumed({ type: 'resumed', chat_id: 'c', message_id: 'm', since: 0, seq: 2, found: true, events: [ev(1), ev(2)] });
    expect(r.apply.map((e) => e.seq)).toEqual([1, 2]);
  });
});

describe('isEnd', () => {
  it('recognises the end of a generation', () => {
    expect(isEnd({ type: 'chat:completion', data: { done: true } })).toBe(true);
    expect(isEnd({ type: 'chat:completion', data: { content: 'x' } })).toBe(false);
    expect(isEnd({ type: 'chat:message:error', data: {} })).toBe(true);
    expect(isEnd({ type: 'chat:active', data: { active: false } })).toBe(true);
  });
});
