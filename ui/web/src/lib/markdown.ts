// Markdown (CommonMark + the GFM parts chat models use) parsed into data,
// never into HTML strings: Svelte renders the nodes, so model output cannot
// inject markup — raw HTML stays text (only <br> becomes a line break, which
// models put in table cells).
//
// The parser runs on every streamed chunk, so it is kept linear: block
// structure is one pass over the lines (nested containers re-read only their
// own lines), inline emphasis uses CommonMark's delimiter-stack algorithm.
// Deliberate simplifications: no indented code blocks (they clash with the
// loose list indentation models produce), no reference-style links, no HTML
// entity decoding; every newline inside a paragraph is a line break, as chat
// users expect.

export type Inline =
  | { t: 'text'; v: string }
  | { t: 'code'; v: string }
  | { t: 'br' }
  | { t: 'strong' | 'em' | 'del'; c: Inline[] }
  | { t: 'link'; href: string; c: Inline[] }
  /** an image is shown as a link to it, never loaded (no tracking pixels) */
  | { t: 'image'; href: string; alt: string };

export type Align = 'left' | 'center' | 'right' | null;
export interface ListItem {
  /** task-list state: null when the item has no [ ] / [x] box */
  checked: boolean | null;
  blocks: Block[];
}
export type Block =
  | { type: 'code'; lang: string; text: string; open: boolean }
  | { type: 'heading'; level: number; inlines: Inline[] }
  | { type: 'para'; inlines: Inline[] }
  | { type: 'quote'; blocks: Block[] }
  | { type: 'list'; ordered: boolean; start: number; tight: boolean; items: ListItem[] }
  | { type: 'hr' }
  | { type: 'table'; align: Align[]; head: Inline[][]; rows: Inline[][][] };

/** Only these schemes become links; anything else (javascript:, data:, relative) stays text. */
export function safeUrl(url: string): string | null {
  const u = url.trim();
  return /^(https?:\/\/|mailto:)/i.test(u) && !/[\s\x00-\x1f]/.test(u) ? u : null;
}

// ---------------------------------------------------------------- blocks

const FENCE = /^ {0,3}(`{3,}|~{3,})[ \t]*([^\s`]*)(.*)$/;
const ATX = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const HR = /^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$/;
const QUOTE = /^ {0,3}> ?/;
const LIST = /^( *)([-*+]|(\d{1,9})[.)])([ \t]+|$)/;
// Underlines of 2+ characters only: a lone "-" is usually a list item still streaming in.
const SETEXT = /^ {0,3}(={2,}|-{2,})[ \t]*$/;
const DELIM_ROW = /^ *\|? *:?-+:? *(?:\| *:?-+:? *)*\|? *$/;
const TASK = /^\[([ xX])\](?:[ \t]+|$)/;

const blank = (s: string) => s.trim() === '';
const indentOf = (s: string) => s.length - s.trimStart().length;

export function parse(src: string): Block[] {
  // Tabs count as 4 spaces of indentation; the rest of the line is untouched.
  const lines = src
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((l) => (l.startsWith('\t') || l.startsWith(' ') ? l.replace(/^[ \t]+/, (w) => w.replace(/\t/g, '    ')) : l));
  return blocks(lines);
}

function fenceOf(line: string): { mark: string; lang: string } | null {
  const m = FENCE.exec(line);
  // A backtick fence's info string cannot hold backticks (that is inline code).
  if (!m || (m[1][0] === '`' && m[3].includes('`'))) return null;
  return { mark: m[1], lang: m[2] };
}

function cells(line: string): string[] {
  let s = line.trim();
  if (s.startsWith('|')) s = s.slice(1);
  if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
  return s.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, '|'));
}

function isTableStart(lines: string[], i: number): boolean {
  const head = lines[i];
  const delim = lines[i + 1];
  return (
    delim !== undefined && head.includes('|') && delim.includes('|') && DELIM_ROW.test(delim) &&
    cells(head).length === cells(delim).length
  );
}

/** Does this line start a block that ends a paragraph? */
function interrupts(lines: string[], i: number): boolean {
  const line = lines[i];
  if (ATX.test(line) || fenceOf(line) || HR.test(line) || QUOTE.test(line) || isTableStart(lines, i)) return true;
  const m = LIST.exec(line);
  // CommonMark: an empty item, or an ordered list not starting at 1, cannot interrupt a paragraph.
  return !!m && m[4] !== '' && (m[3] === undefined || m[3] === '1');
}

function blocks(lines: string[]): Block[] {
  const out: Block[] = [];
  let i = 0;
  const n = lines.length;
  while (i < n) {
    const line = lines[i];
    if (blank(line)) {
      i++;
      continue;
    }
    const f = fenceOf(line);
    if (f) {
      // An unclosed fence runs to the end: the usual state while streaming.
      const strip = indentOf(line);
      const body: string[] = [];
      let open = true;
      for (i++; i < n; i++) {
        const close = lines[i].trim();
        if (close.startsWith(f.mark) && /^[`~]+$/.test(close) && close[0] === f.mark[0] && indentOf(lines[i]) < 4) {
          open = false;
          i++;
          break;
        }
        body.push(lines[i].slice(Math.min(strip, indentOf(lines[i]))));
      }
      out.push({ type: 'code', lang: f.lang.toLowerCase(), text: body.join('\n'), open });
      continue;
    }
    const h = ATX.exec(line);
    if (h) {
      out.push({ type: 'heading', level: h[1].length, inlines: inline(h[2] ?? '') });
      i++;
      continue;
    }
    if (HR.test(line)) {
      out.push({ type: 'hr' });
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const inner: string[] = [];
      while (i < n) {
        if (QUOTE.test(lines[i])) inner.push(lines[i].replace(QUOTE, ''));
        else if (!blank(lines[i]) && inner.length && !blank(inner[inner.length - 1]) && !interrupts(lines, i)) {
          inner.push(lines[i]); // lazy continuation of a quoted paragraph
        } else break;
        i++;
      }
      out.push({ type: 'quote', blocks: blocks(inner) });
      continue;
    }
    if (LIST.test(line)) {
      i = list(lines, i, out);
      continue;
    }
    if (isTableStart(lines, i)) {
      const head = cells(line);
      const align = cells(lines[i + 1]).map((c): Align =>
        c.startsWith(':') && c.endsWith(':') ? 'center' : c.endsWith(':') ? 'right' : c.startsWith(':') ? 'left' : null,
      );
      const rows: Inline[][][] = [];
      for (i += 2; i < n && !blank(lines[i]) && lines[i].includes('|') && !interrupts(lines, i); i++) {
        const r = cells(lines[i]);
        rows.push(head.map((_, k) => inline(r[k] ?? '')));
      }
      out.push({ type: 'table', align, head: head.map((c) => inline(c)), rows });
      continue;
    }
    // Paragraph, possibly a setext heading.
    const para: string[] = [line.trim()];
    for (i++; i < n && !blank(lines[i]); i++) {
      const s = SETEXT.exec(lines[i]);
      if (s) {
        out.push({ type: 'heading', level: s[1][0] === '=' ? 1 : 2, inlines: inline(para.join('\n')) });
        para.length = 0;
        i++;
        break;
      }
      if (interrupts(lines, i)) break;
      para.push(lines[i].trim());
    }
    if (para.length) out.push({ type: 'para', inlines: inline(para.join('\n')) });
  }
  return out;
}

/** Parses the list starting at line i into out; returns the next line index. */
function list(lines: string[], i: number, out: Block[]): number {
  const first = LIST.exec(lines[i])!;
  const ordered = first[3] !== undefined;
  const kind = ordered ? first[2].slice(-1) : first[2];
  const items: ListItem[] = [];
  let tight = true;
  const n = lines.length;
  while (i < n) {
    const m = LIST.exec(lines[i]);
    if (!m || (m[3] !== undefined) !== ordered || (ordered ? m[2].slice(-1) : m[2]) !== kind) break;
    const indent = m[1].length;
    const spaces = m[4].length;
    // Content starts after the marker; 5+ spaces mean "one space, then indented text".
    const offset = indent + m[2].length + (spaces === 0 || spaces > 4 ? 1 : spaces);
    // Models nest with 2 spaces under "1." too, so a line belongs to the item
    // once it is indented past the marker by 2, even if short of the content.
    const threshold = Math.min(offset, indent + 2);
    const body: string[] = [lines[i].slice(Math.min(offset, lines[i].length))];
    let inFence = !!fenceOf(body[0]);
    for (i++; i < n; i++) {
      const l = lines[i];
      if (blank(l)) {
        body.push('');
        continue;
      }
      const ind = indentOf(l);
      const last = body[body.length - 1];
      if (ind >= threshold) body.push(l.slice(Math.min(ind, offset)));
      else if (!blank(last) && !interrupts(lines, i) && !LIST.test(l)) body.push(l.trim()); // lazy continuation
      else break;
      if (fenceOf(body[body.length - 1])) inFence = !inFence;
      else if (!inFence && blank(body[body.length - 2] ?? 'x') && body.length > 2) tight = false;
    }
    let trailing = 0;
    while (body.length > 1 && blank(body[body.length - 1])) {
      body.pop();
      trailing++;
    }
    if (trailing && i < n && LIST.test(lines[i])) tight = false;
    const task = TASK.exec(body[0]);
    if (task) body[0] = body[0].slice(task[0].length);
    items.push({ checked: task ? task[1] !== ' ' : null, blocks: blocks(body) });
  }
  out.push({ type: 'list', ordered, start: ordered ? parseInt(first[3], 10) : 1, tight, items });
  return i;
}

// ---------------------------------------------------------------- inlines

type Node = { node: Inline; prev: Node | null; next: Node | null };
type Delim = {
  ch: string;
  count: number;
  orig: number;
  open: boolean;
  close: boolean;
  at: Node;
  prev: Delim | null;
  next: Delim | null;
};
type Bracket = { at: Node; image: boolean; active: boolean; delims: Delim | null; prev: Bracket | null };

const PUNCT = /[\p{P}\p{S}]/u;
const SPACE = /\s/;
const ESCAPABLE = /[!-/:-@[-`{-~]/;
const AUTOLINK = /https?:\/\/[^\s<]+/y;
const ANGLE_LINK = /<([a-zA-Z][a-zA-Z0-9+.-]{1,31}:[^\s<>]*|[^\s<>@]+@[^\s<>@]+\.[a-zA-Z]{2,})>/y;
const BR_TAG = /<br\s*\/?>/iy;

/** Trim trailing punctuation and unbalanced ")" from a bare URL, as GFM does. */
function trimUrl(url: string): string {
  let u = url.replace(/[?!.,:;*_~'"]+$/, '');
  while (u.endsWith(')') && (u.match(/\(/g)?.length ?? 0) < (u.match(/\)/g)?.length ?? 0)) {
    u = u.slice(0, -1).replace(/[?!.,:;*_~'"]+$/, '');
  }
  return u;
}

export function inline(src: string): Inline[] {
  const s = src;
  const head: Node = { node: { t: 'text', v: '' }, prev: null, next: null };
  let tail = head;
  let delims: Delim | null = null;
  let brackets: Bracket | null = null;
  let text = '';
  const noCloser = new Set<number>(); // backtick run lengths with no closer further on

  const push = (node: Inline): Node => {
    const nd: Node = { node, prev: tail, next: null };
    tail.next = nd;
    tail = nd;
    return nd;
  };
  const flush = () => {
    if (text) push({ t: 'text', v: text });
    text = '';
  };

  let i = 0;
  const n = s.length;
  while (i < n) {
    const c = s[i];
    if (c === '\\' && i + 1 < n) {
      if (s[i + 1] === '\n') {
        flush();
        push({ t: 'br' });
        i += 2;
        continue;
      }
      if (ESCAPABLE.test(s[i + 1])) {
        text += s[i + 1];
        i += 2;
        continue;
      }
    }
    if (c === '\n') {
      text = text.replace(/ +$/, '');
      flush();
      push({ t: 'br' });
      i++;
      while (s[i] === ' ') i++;
      continue;
    }
    if (c === '`') {
      let k = i;
      while (s[k] === '`') k++;
      const len = k - i;
      let close = -1;
      if (!noCloser.has(len)) {
        for (let j = s.indexOf('`', k); j >= 0; j = s.indexOf('`', j)) {
          let e = j;
          while (s[e] === '`') e++;
          if (e - j === len) {
            close = j;
            break;
          }
          j = e;
        }
        if (close < 0) noCloser.add(len);
      }
      if (close < 0) {
        text += s.slice(i, k);
        i = k;
        continue;
      }
      let code = s.slice(k, close).replace(/\n/g, ' ');
      if (code.length > 2 && code[0] === ' ' && code[code.length - 1] === ' ' && code.trim()) code = code.slice(1, -1);
      flush();
      push({ t: 'code', v: code });
      i = close + len;
      continue;
    }
    if (c === '<') {
      BR_TAG.lastIndex = i;
      const br = BR_TAG.exec(s);
      if (br) {
        flush();
        push({ t: 'br' });
        i += br[0].length;
        continue;
      }
      ANGLE_LINK.lastIndex = i;
      const a = ANGLE_LINK.exec(s);
      if (a) {
        const href = safeUrl(a[1].includes(':') ? a[1] : `mailto:${a[1]}`);
        if (href) {
          flush();
          push({ t: 'link', href, c: [{ t: 'text', v: a[1] }] });
          i += a[0].length;
          continue;
        }
      }
    }
    if ((c === 'h' || c === 'H') && (i === 0 || !/[\p{L}\p{N}]/u.test(s[i - 1]))) {
      AUTOLINK.lastIndex = i;
      const a = AUTOLINK.exec(s);
      if (a) {
        // Inside "[...]" the URL is link text: it ends at the bracket.
        const url = trimUrl(brackets ? a[0].split(']')[0] : a[0]);
        if (url.length > 8) {
          flush();
          push({ t: 'link', href: url, c: [{ t: 'text', v: url }] });
          i += url.length;
          continue;
        }
      }
    }
    if (c === '*' || c === '_' || c === '~') {
      let k = i;
      while (s[k] === c) k++;
      const before = i === 0 ? ' ' : s[i - 1];
      const after = k >= n ? ' ' : s[k];
      const left = !SPACE.test(after) && (!PUNCT.test(after) || SPACE.test(before) || PUNCT.test(before));
      const right = !SPACE.test(before) && (!PUNCT.test(before) || SPACE.test(after) || PUNCT.test(after));
      let open = left;
      let close = right;
      if (c === '_') {
        open = left && (!right || PUNCT.test(before));
        close = right && (!left || PUNCT.test(after));
      }
      flush();
      const at = push({ t: 'text', v: s.slice(i, k) });
      if ((open || close) && (c !== '~' || k - i <= 2)) {
        const d: Delim = { ch: c, count: k - i, orig: k - i, open, close, at, prev: delims, next: null };
        if (delims) delims.next = d;
        delims = d;
      }
      i = k;
      continue;
    }
    if (c === '[' || (c === '!' && s[i + 1] === '[')) {
      const image = c === '!';
      flush();
      const at = push({ t: 'text', v: image ? '![' : '[' });
      brackets = { at, image, active: true, delims, prev: brackets };
      i += image ? 2 : 1;
      continue;
    }
    if (c === ']' && brackets) {
      flush();
      const b: Bracket = brackets;
      brackets = b.prev;
      const dest = b.active ? linkTail(s, i + 1) : null;
      if (!dest) {
        text = ']';
        i++;
        continue;
      }
      // The bracket's content becomes the link's children.
      processEmphasis(b.delims);
      delims = b.delims;
      const kids = toArray(b.at.next);
      tail = b.at.prev!;
      tail.next = null;
      const href = safeUrl(dest.url);
      if (b.image) {
        const alt = plain(kids);
        push(href ? { t: 'image', href, alt } : { t: 'text', v: alt });
      } else {
        if (href) push({ t: 'link', href, c: unlink(kids) });
        else for (const k of kids) push(k);
        // No links inside links: earlier "[" can no longer open one.
        for (let o = brackets; o; o = o.prev) if (!o.image) o.active = false;
      }
      i = dest.end;
      continue;
    }
    text += c;
    i++;
  }
  flush();
  processEmphasis(null);
  return tidy(toArray(head.next));

  function processEmphasis(bottom: Delim | null) {
    const openersBottom = new Map<string, Delim | null>();
    let cur: Delim | null = bottom ? bottom.next : first(delims);
    while (cur) {
      if (!cur.close) {
        cur = cur.next;
        continue;
      }
      const key = cur.ch + (cur.open ? 'o' : '') + (cur.orig % 3);
      const floor = openersBottom.has(key) ? openersBottom.get(key)! : bottom;
      let op: Delim | null = cur.prev;
      while (op && op !== floor && op !== bottom) {
        const odd = (op.close || cur.open) && (op.orig + cur.orig) % 3 === 0 && !(op.orig % 3 === 0 && cur.orig % 3 === 0);
        if (op.ch === cur.ch && op.open && (cur.ch === '~' ? op.count === cur.count : !odd)) break;
        op = op.prev;
      }
      if (!op || op === floor || op === bottom) {
        openersBottom.set(key, cur.prev);
        const next: Delim | null = cur.next;
        if (!cur.open) unlinkDelim(cur);
        cur = next;
        continue;
      }
      const use = cur.ch === '~' ? cur.count : op.count >= 2 && cur.count >= 2 ? 2 : 1;
      const t: 'del' | 'strong' | 'em' = cur.ch === '~' ? 'del' : use === 2 ? 'strong' : 'em';
      op.count -= use;
      cur.count -= use;
      (op.at.node as { v: string }).v = (op.at.node as { v: string }).v.slice(use);
      (cur.at.node as { v: string }).v = (cur.at.node as { v: string }).v.slice(use);
      const wrap: Node = { node: { t, c: toArray(op.at.next, cur.at) }, prev: op.at, next: cur.at };
      op.at.next = wrap;
      cur.at.prev = wrap;
      // Delimiters between the pair can no longer match anything.
      op.next = cur;
      cur.prev = op;
      if (op.count === 0) {
        removeNode(op.at);
        unlinkDelim(op);
      }
      if (cur.count === 0) {
        removeNode(cur.at);
        const next: Delim | null = cur.next;
        unlinkDelim(cur);
        cur = next;
      }
    }
    // Whatever is left above the bottom is plain text.
    while (delims && delims !== bottom) unlinkDelim(delims);
  }

  function first(d: Delim | null): Delim | null {
    while (d && d.prev) d = d.prev;
    return d;
  }
  function unlinkDelim(d: Delim) {
    if (d.prev) d.prev.next = d.next;
    if (d.next) d.next.prev = d.prev;
    if (delims === d) delims = d.prev;
  }
  function removeNode(nd: Node) {
    if (nd.prev) nd.prev.next = nd.next;
    if (nd.next) nd.next.prev = nd.prev;
    if (tail === nd) tail = nd.prev!;
  }
}

function toArray(from: Node | null, until: Node | null = null): Inline[] {
  const out: Inline[] = [];
  for (let nd = from; nd && nd !== until; nd = nd.next) out.push(nd.node);
  return out;
}

/** Parses "(url "title")" after a "]"; returns the url and the index past ")". */
function linkTail(s: string, i: number): { url: string; end: number } | null {
  if (s[i] !== '(') return null;
  let p = i + 1;
  while (s[p] === ' ' || s[p] === '\n') p++;
  let url = '';
  if (s[p] === '<') {
    const e = s.indexOf('>', p);
    if (e < 0 || s.slice(p, e).includes('\n')) return null;
    url = s.slice(p + 1, e);
    p = e + 1;
  } else {
    let depth = 0;
    const start = p;
    for (; p < s.length; p++) {
      const ch = s[p];
      if (ch === '\\' && p + 1 < s.length) p++;
      else if (ch === '(') depth++;
      else if (ch === ')') {
        if (depth === 0) break;
        depth--;
      } else if (/\s/.test(ch)) break;
    }
    url = s.slice(start, p).replace(/\\([!-/:-@[-`{-~])/g, '$1');
  }
  while (s[p] === ' ' || s[p] === '\n') p++;
  const q = s[p];
  if (q === '"' || q === "'" || q === '(') {
    const e = s.indexOf(q === '(' ? ')' : q, p + 1);
    if (e < 0) return null;
    p = e + 1;
    while (s[p] === ' ' || s[p] === '\n') p++;
  }
  return s[p] === ')' ? { url, end: p + 1 } : null;
}

/** Text of inlines (an image's alt). */
function plain(items: Inline[]): string {
  return items
    .map((x) => ('v' in x ? x.v : 'c' in x ? plain(x.c) : x.t === 'image' ? x.alt : ' '))
    .join('');
}

/** Links nested in a link's text (autolinked URLs) become their text. */
function unlink(items: Inline[]): Inline[] {
  return items.flatMap((x): Inline[] =>
    x.t === 'link' ? unlink(x.c) : 'c' in x ? [{ ...x, c: unlink(x.c) }] : [x],
  );
}

/** Merges adjacent text and drops empty text, recursively. */
function tidy(items: Inline[]): Inline[] {
  const out: Inline[] = [];
  for (const x of items) {
    if (x.t === 'text') {
      if (!x.v) continue;
      const last = out[out.length - 1];
      if (last?.t === 'text') out[out.length - 1] = { t: 'text', v: last.v + x.v };
      else out.push({ t: 'text', v: x.v });
    } else if ('c' in x) out.push({ ...x, c: tidy(x.c) });
    else out.push(x);
  }
  return out;
}
