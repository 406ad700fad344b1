// Splits an assistant message into what the UI shows, in order: answer
// text, reasoning and tool calls. Sources, newest first (COMPAT.md §4.7-4.8):
// - `output`: structured items (0.10+); `content` is the answer text only.
// - legacy `content` (imported Open WebUI ≤0.9 chats) with serialized
//   `<details type="reasoning|tool_calls|code_interpreter">` blocks, or raw
//   `<think>…</think>` text. These are parsed as text, never rendered as HTML.
import type { Message } from '../../lib/tree';

export type Part =
  | { kind: 'text'; text: string }
  /** duration in seconds when known; thinking while it is still streaming */
  | { kind: 'reasoning'; text: string; duration: number | null; thinking: boolean }
  /** result is null until the tool has answered */
  | { kind: 'tool'; name: string; args: string; result: string | null };

type Item = Record<string, any>;

const texts = (parts: unknown): string =>
  Array.isArray(parts) ? parts.map((p) => (typeof p?.text === 'string' ? p.text : '')).join('') : '';

const num = (v: unknown): number | null => {
  const n = typeof v === 'string' && v.trim() ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) ? n : null;
};

const str = (v: unknown): string => (typeof v === 'string' ? v : v == null ? '' : JSON.stringify(v, null, 2));

export function messageParts(m: Message): Part[] {
  const generating = m.done === false;
  const output = Array.isArray(m.output) ? (m.output as Item[]) : [];
  if (!output.length) return legacyParts(m.content ?? '', generating);

  const results = new Map<string, string>();
  for (const it of output) {
    if (it?.type === 'function_call_output') results.set(it.call_id, texts(it.output) || str(it.output));
  }
  const parts: Part[] = [];
  output.forEach((it, k) => {
    if (it?.type === 'message') parts.push({ kind: 'text', text: texts(it.content) });
    else if (it?.type === 'reasoning') {
      const last = k === output.length - 1;
      parts.push({
        kind: 'reasoning',
        text: texts(it.content) || texts(it.summary),
        duration: num(it.duration),
        thinking: generating && (it.status === 'in_progress' || (!it.status && last)),
      });
    } else if (it?.type === 'function_call') {
      parts.push({ kind: 'tool', name: str(it.name), args: str(it.arguments), result: results.get(it.call_id) ?? null });
    } else if (it?.type === 'open_webui:code_interpreter') {
      parts.push({ kind: 'tool', name: 'Code interpreter', args: str(it.code), result: it.output ? str(it.output) : null });
    }
  });
  // `content` is the text of the message items. If an event changed it
  // without a new `output` snapshot, trust it: the text goes after the rest.
  const fromItems = parts.map((p) => (p.kind === 'text' ? p.text : '')).join('');
  const content = m.content ?? '';
  if (content.trim() && content.trim() !== fromItems.trim()) {
    return [...parts.filter((p) => p.kind !== 'text'), { kind: 'text', text: content }];
  }
  return parts.filter((p) => p.kind !== 'text' || p.text.trim());
}

const LEGACY = /<details\s([^>]*)>|<(think|thinking|reason|reasoning|thought)>/gi;
const ATTR = /([\w-]+)="([^"]*)"/g;
const ENTITY: Record<string, string> = { quot: '"', amp: '&', lt: '<', gt: '>', '#39': "'", '#x27': "'" };

const unescape = (s: string) => s.replace(/&(quot|amp|lt|gt|#39|#x27);/g, (_, e: string) => ENTITY[e]);

/** A JSON-encoded attribute ("\"text\"" or {...}) shown as readable text. */
function decoded(v: string | undefined): string | null {
  if (v === undefined || v === '') return null;
  const s = unescape(v);
  try {
    const j = JSON.parse(s);
    return typeof j === 'string' ? j : JSON.stringify(j, null, 2);
  } catch {
    return s;
  }
}

function legacyParts(content: string, generating: boolean): Part[] {
  const parts: Part[] = [];
  const text = (s: string) => {
    if (s.trim()) parts.push({ kind: 'text', text: s });
  };
  let last = 0;
  LEGACY.lastIndex = 0;
  for (let m = LEGACY.exec(content); m; m = LEGACY.exec(content)) {
    const start = m.index;
    const bodyStart = start + m[0].length;
    if (m[2]) {
      const closeRe = new RegExp(`</${m[2]}>`, 'gi');
      closeRe.lastIndex = bodyStart;
      const close = closeRe.exec(content)?.index ?? -1;
      const end = close < 0 ? content.length : close + m[2].length + 3;
      text(content.slice(last, start));
      parts.push({
        kind: 'reasoning',
        text: content.slice(bodyStart, close < 0 ? content.length : close).trim(),
        duration: null,
        thinking: generating && close < 0,
      });
      last = LEGACY.lastIndex = end;
      continue;
    }
    const attrs: Record<string, string> = {};
    for (const a of m[1].matchAll(ATTR)) attrs[a[1]] = a[2];
    if (!['reasoning', 'tool_calls', 'code_interpreter'].includes(attrs.type)) continue; // a model's own <details>: text
    const close = content.indexOf('</details>', bodyStart);
    const end = close < 0 ? content.length : close + '</details>'.length;
    const body = content.slice(bodyStart, close < 0 ? content.length : close).replace(/^\s*<summary>[\s\S]*?<\/summary>/, '');
    text(content.slice(last, start));
    if (attrs.type === 'reasoning') {
      parts.push({
        kind: 'reasoning',
        // ≤0.9 quoted every reasoning line with "> ".
        text: body.trim().replace(/^> ?/gm, ''),
        duration: num(attrs.duration),
        thinking: generating && attrs.done !== 'true',
      });
    } else if (attrs.type === 'tool_calls') {
      parts.push({
        kind: 'tool',
        name: unescape(attrs.name ?? ''),
        args: decoded(attrs.arguments) ?? '',
        result: decoded(attrs.result),
      });
    } else {
      parts.push({ kind: 'tool', name: 'Code interpreter', args: body.trim(), result: decoded(attrs.output) });
    }
    last = LEGACY.lastIndex = end;
  }
  text(content.slice(last));
  return parts;
}
