// @vitest-environment happy-dom
import { afterEach, describe, expect, it } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import MessageBody from './components/MessageBody.svelte';
import type { Message } from './lib/tree';

let view: Record<string, any> | null = null;

afterEach(() => {
  if (view) unmount(view);
  view = null;
  document.body.innerHTML = '';
});

function show(m: Partial<Message>): HTMLElement {
  const message: Message = { id: 'a', parentId: 'u', childrenIds: [], role: 'assistant', content: '', timestamp: 0, ...m };
  view = mount(MessageBody, { target: document.body, props: { message, watermark: '' } });
  flushSync();
  return document.body;
}

const reasoning = (text: string, extra: Record<string, unknown> = {}) => ({
  type: 'reasoning', id: 'r_1', status: 'completed', content: [{ type: 'output_text', text }], ...extra,
});
const answer = (text: string) => ({
  type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text }],
});

describe('MessageBody', () => {
  it('renders markdown answers as elements, raw HTML as text', () => {
    const el = show({ content: '## Hi\n\n- **a** <img src=x onerror=alert(1)>\n- [b](javascript:alert(1)) [c](https://c.example)', done: true });
    expect(el.querySelector('h4')?.textContent).toBe('Hi');
    expect(el.querySelector('li strong')?.textContent).toBe('a');
    expect(el.querySelector('img')).toBeNull();
    expect(el.querySelector('li')?.textContent).toContain('<img src=x onerror=alert(1)>');
    const links = [...el.querySelectorAll('a')];
    expect(links.map((a) => a.getAttribute('href'))).toEqual(['https://c.example']);
    expect(links[0].getAttribute('rel')).toBe('noopener noreferrer');
    expect(links[0].getAttribute('target')).toBe('_blank');
  });

  it('highlights code blocks and keeps the copy button', () => {
    const el = show({ content: '```js\nconst a = "x"; // c\n```', done: true });
    expect(el.querySelector('.code-head span')?.textContent).toBe('js');
    expect(el.querySelector('.tok-kw')?.textContent).toBe('const');
    expect(el.querySelector('.tok-str')?.textContent).toBe('"x"');
    expect(el.querySelector('.tok-com')?.textContent).toBe('// c');
    expect(el.querySelector('pre')?.textContent).toBe('const a = "x"; // c');
    expect(el.querySelector('button[aria-label="Copy code"]')).not.toBeNull();
  });

  it('shows reasoning from output collapsed, with its duration, above the answer', () => {
    const el = show({
      content: 'The answer',
      output: [reasoning('I **think**', { duration: 5 }), answer('The answer')],
      done: true,
    });
    const d = el.querySelector('details') as HTMLDetailsElement;
    expect(d.open).toBe(false);
    expect(d.querySelector('summary')?.textContent).toBe('Thought for 5 seconds');
    expect(d.querySelector('strong')?.textContent).toBe('think');
    expect(el.querySelector('.text')?.textContent).toBe('The answer');
    // Reasoning comes first in the document.
    expect(d.compareDocumentPosition(el.querySelector('.text')!) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
  });

  it('says Thinking… while the reasoning streams, with the typing dots', () => {
    const el = show({ content: '', output: [reasoning('hmm', { status: 'in_progress' })], done: false });
    expect(el.querySelector('summary')?.textContent).toBe('Thinking…');
    expect(el.querySelector('.typing')).not.toBeNull();
  });

  it('uses content when the output snapshot is behind it', () => {
    const el = show({ content: 'newer text', output: [reasoning('r', { duration: 1 }), answer('new')], done: false });
    expect(el.querySelector('summary')?.textContent).toBe('Thought for 1 second');
    expect(el.querySelector('.text')?.textContent).toBe('newer text');
    expect(el.querySelector('.typing')).toBeNull();
  });

  it('parses legacy <details type="reasoning"> and tool_calls blocks as text', () => {
    const content =
      '<details type="reasoning" done="true" duration="3">\n<summary>Thought for 3 seconds</summary>\n> step <b>one</b>\n> step two\n</details>\n' +
      '<details type="tool_calls" done="true" id="c1" name="get_weather" arguments="&quot;{\\&quot;city\\&quot;: \\&quot;Paris\\&quot;}&quot;" result="&quot;Sunny&quot;">\n<summary>Tool Executed</summary>\n</details>\n' +
      'It is sunny.';
    const el = show({ content, done: true });
    const [r, tool] = [...el.querySelectorAll('details')];
    expect(r.querySelector('summary')?.textContent).toBe('Thought for 3 seconds');
    expect(r.querySelector('.body')?.textContent).toBe('step <b>one</b>step two');
    expect(r.querySelector('b')).toBeNull();
    expect(r.querySelector('blockquote')).toBeNull(); // the "> " quoting is stripped
    expect(tool.querySelector('summary')?.textContent).toContain('get_weather');
    expect([...tool.querySelectorAll('pre')].map((p) => p.textContent)).toEqual(['{\n  "city": "Paris"\n}', 'Sunny']);
    expect(el.querySelector('.text')?.textContent).toBe('It is sunny.');
    expect(el.textContent).not.toContain('<details');
  });

  it('parses <think> text out of the content', () => {
    const el = show({ content: '<think>Let me see</think>\nHello', done: true });
    expect(el.querySelector('summary')?.textContent).toBe('Thought');
    expect(el.querySelector('details .body')?.textContent).toBe('Let me see');
    expect(el.querySelector('.text')?.textContent).toBe('Hello');
  });

  it('renders function calls from output with their results', () => {
    const el = show({
      content: 'Done.',
      output: [
        { type: 'function_call', id: 'fc_1', call_id: 'c1', name: 'search', arguments: '{"q":"x"}', status: 'completed' },
        { type: 'function_call_output', call_id: 'c1', output: [{ type: 'input_text', text: '3 hits' }], status: 'completed' },
        answer('Done.'),
      ],
      done: true,
    });
    const tool = el.querySelector('details')!;
    expect(tool.querySelector('code')?.textContent).toBe('search');
    expect([...tool.querySelectorAll('pre')].map((p) => p.textContent)).toEqual(['{\n  "q": "x"\n}', '3 hits']);
    expect(el.querySelector('.text')?.textContent).toBe('Done.');
  });

  it('shows the error in an alert below the generated text', () => {
    const el = show({ content: 'Partial', error: { content: 'Upstream <b>failed</b>' }, done: true });
    const alert = el.querySelector('[role=alert]')!;
    expect(alert.textContent).toBe('Upstream <b>failed</b>');
    expect(el.querySelector('.text')!.compareDocumentPosition(alert) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    expect(el.textContent).not.toContain('No response');
  });

  it('says "No response" for a finished empty answer, dots while generating', () => {
    expect(show({ content: '', done: true }).textContent).toContain('No response');
    unmount(view!);
    view = null;
    const el = show({ content: '', done: false });
    expect(el.querySelector('.typing')).not.toBeNull();
    expect(el.textContent).not.toContain('No response');
  });

  it('keeps user messages as plain text with their newlines', () => {
    const el = show({ role: 'user', content: 'line *one*\n<b>two</b>' });
    const t = el.querySelector('.text.pre')!;
    expect(t.textContent).toBe('line *one*\n<b>two</b>');
    expect(t.querySelector('em, b')).toBeNull();
  });
});
