import { describe, expect, it } from 'vitest';
import { inline, parse, safeUrl, type Inline } from './markdown';

const text = (v: string): Inline => ({ t: 'text', v });

describe('markdown blocks', () => {
  it('splits paragraphs, headings and fenced code; newlines are line breaks', () => {
    const b = parse('# Title\n\nHello **you**\nnext line\n\n```go\nfmt.Println("<b>")\n```\nafter');
    expect(b).toEqual([
      { type: 'heading', level: 1, inlines: [text('Title')] },
      { type: 'para', inlines: [text('Hello '), { t: 'strong', c: [text('you')] }, { t: 'br' }, text('next line')] },
      { type: 'code', lang: 'go', text: 'fmt.Println("<b>")', open: false },
      { type: 'para', inlines: [text('after')] },
    ]);
  });

  it('keeps an unclosed fence open to the end while streaming', () => {
    expect(parse('x\n```py\nprint(1)\n\n# not a heading')).toEqual([
      { type: 'para', inlines: [text('x')] },
      { type: 'code', lang: 'py', text: 'print(1)\n\n# not a heading', open: true },
    ]);
    expect(parse('~~~\n```\nstill code')).toEqual([{ type: 'code', lang: '', text: '```\nstill code', open: true }]);
  });

  it('parses heading levels, closing hashes and setext headings', () => {
    expect(parse('### Three ###\n#nothashtag\n\nSub\n---')).toEqual([
      { type: 'heading', level: 3, inlines: [text('Three')] },
      { type: 'para', inlines: [text('#nothashtag')] },
      { type: 'heading', level: 2, inlines: [text('Sub')] },
    ]);
  });

  it('parses horizontal rules and blockquotes with nested blocks', () => {
    expect(parse('a\n\n***\n\n> quoted **b**\nlazy\n>\n> - item')).toEqual([
      { type: 'para', inlines: [text('a')] },
      { type: 'hr' },
      {
        type: 'quote',
        blocks: [
          { type: 'para', inlines: [text('quoted '), { t: 'strong', c: [text('b')] }, { t: 'br' }, text('lazy')] },
          { type: 'list', ordered: false, start: 1, tight: true, items: [{ checked: null, blocks: [{ type: 'para', inlines: [text('item')] }] }] },
        ],
      },
    ]);
  });

  it('parses nested bullet and ordered lists, with start numbers', () => {
    // "1." may interrupt a paragraph; another number is just text (CommonMark).
    expect(parse('Steps:\n1. a')).toMatchObject([{ type: 'para' }, { type: 'list', start: 1 }]);
    expect(parse('In\n2024. it rained')).toMatchObject([{ type: 'para' }]);
    const l = parse('3. first\n   - sub a\n   - sub b\n4. second\n  1. deep')[0];
    expect(l).toMatchObject({ type: 'list', ordered: true, start: 3, tight: true });
    if (l.type !== 'list') throw new Error('not a list');
    expect(l.items).toHaveLength(2);
    expect(l.items[0].blocks[1]).toMatchObject({ type: 'list', ordered: false, items: [{}, {}] });
    expect(l.items[1].blocks[1]).toMatchObject({ type: 'list', ordered: true, start: 1 });
  });

  it('tells loose lists from tight ones and reads task boxes', () => {
    expect(parse('- a\n\n- b')[0]).toMatchObject({ tight: false });
    const l = parse('- [ ] todo\n- [x] done\n- plain');
    expect(l[0]).toMatchObject({
      tight: true,
      items: [{ checked: false }, { checked: true }, { checked: null }],
    });
    expect(parse('* a\n+ b')).toHaveLength(2); // a different bullet starts a new list
  });

  it('keeps fenced code inside a list item', () => {
    const l = parse('1. Run:\n   ```sh\n   make\n   ```\n2. Done');
    expect(l[0]).toMatchObject({
      type: 'list',
      items: [{ blocks: [{ type: 'para' }, { type: 'code', lang: 'sh', text: 'make', open: false }] }, {}],
    });
  });

  it('parses GFM tables with alignment', () => {
    expect(parse('| Name | Qty |  x  |\n|:-----|----:|:---:|\n| `a\\|b` | 2 |\n\nafter')).toEqual([
      {
        type: 'table',
        align: ['left', 'right', 'center'],
        head: [[text('Name')], [text('Qty')], [text('x')]],
        rows: [[[{ t: 'code', v: 'a|b' }], [text('2')], []]],
      },
      { type: 'para', inlines: [text('after')] },
    ]);
    // A header without a delimiter row (still streaming) is a paragraph.
    expect(parse('| a | b |')[0].type).toBe('para');
  });

  it('shows raw HTML as text', () => {
    expect(parse('<script>alert(1)</script>\n<img src=x onerror=alert(1)>')).toEqual([
      { type: 'para', inlines: [text('<script>alert(1)</script>'), { t: 'br' }, text('<img src=x onerror=alert(1)>')] },
    ]);
  });
});

describe('markdown inlines', () => {
  it('parses inline code, emphasis, strong and strikethrough', () => {
    expect(inline('use `a*b*c` and *it* or _it_, ~~gone~~ <b>x</b>')).toEqual([
      text('use '), { t: 'code', v: 'a*b*c' }, text(' and '), { t: 'em', c: [text('it')] }, text(' or '),
      { t: 'em', c: [text('it')] }, text(', '), { t: 'del', c: [text('gone')] }, text(' <b>x</b>'),
    ]);
    expect(inline('2 * 3 * 4 and snake_case_name')).toEqual([text('2 * 3 * 4 and snake_case_name')]);
    expect(inline('***both*** and **bold *nested***')).toEqual([
      { t: 'em', c: [{ t: 'strong', c: [text('both')] }] }, text(' and '),
      { t: 'strong', c: [text('bold '), { t: 'em', c: [text('nested')] }] },
    ]);
    expect(inline('\\*not em\\* and ``a ` b``')).toEqual([text('*not em* and '), { t: 'code', v: 'a ` b' }]);
    expect(inline('unclosed `code and **bold')).toEqual([text('unclosed `code and **bold')]);
  });

  it('makes links only for http(s) and mailto URLs', () => {
    expect(inline('[docs](https://x.dev/a_(b) "T") [mail](mailto:a@b.c)')).toEqual([
      { t: 'link', href: 'https://x.dev/a_(b)', c: [text('docs')] }, text(' '),
      { t: 'link', href: 'mailto:a@b.c', c: [text('mail')] },
    ]);
    expect(inline('[click](javascript:alert(1)) [rel](/local) [d](data:text/html,x)')).toEqual([
      text('click rel d'),
    ]);
    expect(inline('[**bold** link](http://a.b)')).toEqual([
      { t: 'link', href: 'http://a.b', c: [{ t: 'strong', c: [text('bold')] }, text(' link')] },
    ]);
    expect(safeUrl(' HTTPS://ok.example ')).toBe('HTTPS://ok.example');
    expect(safeUrl('https://a b')).toBeNull();
  });

  it('autolinks bare URLs, trimming trailing punctuation', () => {
    expect(inline('See https://example.com/x?y=1. Or (https://a.b/c) and <https://d.e>, not javascript:x')).toEqual([
      text('See '), { t: 'link', href: 'https://example.com/x?y=1', c: [text('https://example.com/x?y=1')] },
      text('. Or ('), { t: 'link', href: 'https://a.b/c', c: [text('https://a.b/c')] }, text(') and '),
      { t: 'link', href: 'https://d.e', c: [text('https://d.e')] }, text(', not javascript:x'),
    ]);
    // A URL as link text is not a second link.
    expect(inline('[https://a.b](https://a.b)')).toEqual([
      { t: 'link', href: 'https://a.b', c: [text('https://a.b')] },
    ]);
    expect(inline('<javascript:alert(1)>')).toEqual([text('<javascript:alert(1)>')]);
  });

  it('turns images into links, unsafe images into their alt text', () => {
    expect(inline('![a *cat*](https://i.example/c.png) ![x](javascript:1)')).toEqual([
      { t: 'image', href: 'https://i.example/c.png', alt: 'a cat' }, text(' x'),
    ]);
  });

  it('treats <br> as a line break and other tags as text', () => {
    expect(inline('a<br>b<br/>c <i>d</i>')).toEqual([
      text('a'), { t: 'br' }, text('b'), { t: 'br' }, text('c <i>d</i>'),
    ]);
  });
});
