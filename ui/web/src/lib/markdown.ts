// A small, safe Markdown subset parsed into data (never into HTML strings):
// Svelte renders the nodes as text, so model output cannot inject markup.
// Supported: fenced code blocks (``` or ~~~, an unclosed fence runs to the
// end — the usual state while streaming), headings, paragraphs with line
// breaks, inline `code`, **strong** and *em* / _em_.

export type Inline = { t: 'text' | 'code' | 'strong' | 'em'; v: string };
export type Block =
  | { type: 'code'; lang: string; text: string; open: boolean }
  | { type: 'heading'; level: number; inlines: Inline[] }
  | { type: 'para'; inlines: Inline[] };

const fence = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/;

export function parse(src: string): Block[] {
  const lines = src.replace(/\r\n?/g, '\n').split('\n');
  const out: Block[] = [];
  let para: string[] = [];
  const flush = () => {
    if (para.length) out.push({ type: 'para', inlines: inline(para.join('\n')) });
    para = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const f = fence.exec(line);
    if (f) {
      flush();
      const mark = f[1];
      const body: string[] = [];
      let open = true;
      for (i++; i < lines.length; i++) {
        if (lines[i].trim().startsWith(mark[0].repeat(mark.length)) && lines[i].trim().replace(/[`~]/g, '') === '') {
          open = false;
          break;
        }
        body.push(lines[i]);
      }
      out.push({ type: 'code', lang: f[2] ?? '', text: body.join('\n'), open });
      continue;
    }
    const h = /^(#{1,6})\s+(.*)$/.exec(line);
    if (h) {
      flush();
      out.push({ type: 'heading', level: h[1].length, inlines: inline(h[2]) });
      continue;
    }
    if (line.trim() === '') flush();
    else para.push(line);
  }
  flush();
  return out;
}

const inlineRe = /(`+)([\s\S]*?[^`])\1(?!`)|\*\*([^*\n]+?)\*\*|(?<![\w*])\*([^*\s][^*\n]*?)\*(?![\w*])|(?<!\w)_([^_\s][^_\n]*?)_(?!\w)/g;

export function inline(s: string): Inline[] {
  const out: Inline[] = [];
  let last = 0;
  for (const m of s.matchAll(inlineRe)) {
    if (m.index! > last) out.push({ t: 'text', v: s.slice(last, m.index) });
    if (m[1]) out.push({ t: 'code', v: m[2].trim() === '' ? m[2] : m[2].replace(/^ (.*) $/, '$1') });
    else if (m[3]) out.push({ t: 'strong', v: m[3] });
    else out.push({ t: 'em', v: m[4] ?? m[5] });
    last = m.index! + m[0].length;
  }
  if (last < s.length) out.push({ t: 'text', v: s.slice(last) });
  return out;
}
