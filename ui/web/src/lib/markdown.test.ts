import { describe, expect, it } from 'vitest';
import { inline, parse } from './markdown';

describe('markdown', () => {
  it('splits paragraphs, headings and fenced code', () => {
    const b = parse('# Title\n\nHello **you**\nnext line\n\n```go\nfmt.Println("<b>")\n```\nafter');
    expect(b).toEqual([
      { type: 'heading', level: 1, inlines: [{ t: 'text', v: 'Title' }] },
      { type: 'para', inlines: [{ t: 'text', v: 'Hello ' }, { t: 'strong', v: 'you' }, { t: 'text', v: '\nnext line' }] },
      { type: 'code', lang: 'go', text: 'fmt.Println("<b>")', open: false },
      { type: 'para', inlines: [{ t: 'text', v: 'after' }] },
    ]);
  });

  it('keeps an unclosed fence open while streaming', () => {
    expect(parse('x\n```py\nprint(1)')).toEqual([
      { type: 'para', inlines: [{ t: 'text', v: 'x' }] },
      { type: 'code', lang: 'py', text: 'print(1)', open: true },
    ]);
  });

  it('parses inline code and emphasis, leaves markup as text', () => {
    expect(inline('use `a*b*c` and *it* or _it_, <script>')).toEqual([
      { t: 'text', v: 'use ' }, { t: 'code', v: 'a*b*c' }, { t: 'text', v: ' and ' }, { t: 'em', v: 'it' },
      { t: 'text', v: ' or ' }, { t: 'em', v: 'it' }, { t: 'text', v: ', <script>' },
    ]);
    expect(inline('2 * 3 * 4 and snake_case_name')).toEqual([{ t: 'text', v: '2 * 3 * 4 and snake_case_name' }]);
  });
});
