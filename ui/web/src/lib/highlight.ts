// A small syntax highlighter for code blocks: one linear pass per block
// turning source text into tokens the UI renders as <span class="tok-…">.
// It knows comments, strings, numbers, keywords and calls — enough colour to
// read code, not a grammar. Concatenating the tokens' text always gives the
// input back (nothing is dropped or rewritten). Unknown languages → plain.

export type TokKind = 'kw' | 'str' | 'com' | 'num' | 'fn' | 'plain';
export interface Token {
  kind: TokKind;
  text: string;
}

interface Spec {
  kw: Set<string>;
  /** line comment openers */
  line?: string[];
  /** block comment [open, close] pairs */
  block?: [string, string][];
  /** quote characters that open a string on one line */
  quotes?: string;
  /** quote characters whose strings may span lines (JS/Go backticks) */
  multi?: string;
  /** Python's """ and ''' strings */
  triple?: boolean;
  /** ' opens a char literal only when it looks like one (Rust lifetimes, C chars) */
  charLit?: boolean;
  /** # starts a comment only at a word start (shell, YAML: $# and a#b are not comments) */
  hashAtWord?: boolean;
  /** keywords match case-insensitively (SQL) */
  ci?: boolean;
  /** identifier characters beyond [A-Za-z0-9_$] (CSS and YAML allow "-") */
  extra?: string;
  /** "name:" at a line start is a key (YAML) */
  keys?: boolean;
  /** #directive is a keyword (C preprocessor), #abc a number (CSS colour) */
  hash?: 'directive' | 'color';
  /** @name is a call-like decorator (Python, Java annotations) or a keyword (CSS at-rules) */
  at?: 'fn' | 'kw';
}

const words = (s: string) => new Set(s.split(' '));

const JS_KW =
  'break case catch class const continue debugger default delete do else export extends finally for from function get if import in instanceof let new of return set static super switch this throw try typeof var void while with yield async await true false null undefined NaN Infinity';
const TS_KW = ' interface type enum implements private protected public readonly declare namespace abstract as is keyof infer never unknown any string number boolean symbol object satisfies';
const CLIKE_KW =
  'auto break case char const continue default do double else enum extern float for goto if inline int long register return short signed sizeof static struct switch typedef union unsigned void volatile while bool true false NULL nullptr class namespace template typename public private protected virtual override final new delete this throw try catch using operator friend constexpr noexcept static_cast dynamic_cast reinterpret_cast const_cast std abstract extends implements import package interface super synchronized throws instanceof boolean byte null var record string object readonly internal sealed async await';

const SPECS: Record<string, Spec> = {
  js: { kw: words(JS_KW), line: ['//'], block: [['/*', '*/']], quotes: `"'`, multi: '`' },
  ts: { kw: words(JS_KW + TS_KW), line: ['//'], block: [['/*', '*/']], quotes: `"'`, multi: '`', at: 'fn' },
  py: {
    kw: words(
      'and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield match case True False None self print len range',
    ),
    line: ['#'], quotes: `"'`, triple: true, at: 'fn',
  },
  go: {
    kw: words(
      'break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var true false nil iota error string int int64 int32 uint uint64 byte rune bool float64 any make len cap append new panic recover',
    ),
    line: ['//'], block: [['/*', '*/']], quotes: `"'`, multi: '`',
  },
  rust: {
    kw: words(
      'as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while Some None Ok Err Option Result Vec String Box i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize f32 f64 bool char str',
    ),
    line: ['//'], block: [['/*', '*/']], quotes: '"', charLit: true,
  },
  c: { kw: words(CLIKE_KW), line: ['//'], block: [['/*', '*/']], quotes: '"', charLit: true, hash: 'directive', at: 'fn' },
  bash: {
    kw: words(
      'if then else elif fi for while until do done case esac in function return local export readonly declare unset shift exit break continue source alias echo cd set eval exec trap sudo',
    ),
    line: ['#'], quotes: `"'`, hashAtWord: true,
  },
  json: { kw: words('true false null'), line: ['//'], block: [['/*', '*/']], quotes: '"' },
  sql: {
    kw: words(
      'select from where and or not insert into values update set delete create table drop alter add column index primary key foreign references join inner left right outer full on as group by order having limit offset distinct union all case when then else end null is in like between exists default unique check constraint view with returning begin commit rollback transaction if asc desc count sum avg min max integer int text varchar boolean timestamp true false',
    ),
    line: ['--'], block: [['/*', '*/']], quotes: `'"`, ci: true,
  },
  css: {
    kw: words('important inherit initial unset none auto revert'),
    block: [['/*', '*/']], quotes: `"'`, extra: '-', hash: 'color', at: 'kw',
  },
  yaml: { kw: words('true false null yes no on off ~'), line: ['#'], quotes: `"'`, hashAtWord: true, extra: '-.', keys: true },
};

const ALIASES: Record<string, string> = {
  javascript: 'js', jsx: 'js', mjs: 'js', cjs: 'js', node: 'js',
  typescript: 'ts', tsx: 'ts', mts: 'ts',
  python: 'py', python3: 'py', py3: 'py',
  golang: 'go', rs: 'rust',
  h: 'c', cpp: 'c', 'c++': 'c', cc: 'c', cxx: 'c', hpp: 'c', java: 'c', cs: 'c', csharp: 'c', 'c#': 'c', kotlin: 'c', kt: 'c',
  sh: 'bash', shell: 'bash', zsh: 'bash', console: 'bash', shellscript: 'bash',
  jsonc: 'json', json5: 'json',
  mysql: 'sql', postgresql: 'sql', postgres: 'sql', sqlite: 'sql', plsql: 'sql',
  scss: 'css', less: 'css', yml: 'yaml',
  htm: 'html', xml: 'html', svg: 'html', xhtml: 'html', vue: 'html', svelte: 'html',
};

/** The canonical language for a fence's info string, or '' when unknown. */
export function language(lang: string): string {
  const l = lang.trim().toLowerCase();
  const k = ALIASES[l] ?? l;
  return k === 'html' || SPECS[k] ? k : '';
}

export function highlight(code: string, lang: string): Token[] {
  const l = language(lang);
  if (!l) return code ? [{ kind: 'plain', text: code }] : [];
  return l === 'html' ? markup(code) : scan(code, SPECS[l]);
}

class Out {
  tokens: Token[] = [];
  push(kind: TokKind, text: string) {
    if (!text) return;
    const last = this.tokens[this.tokens.length - 1];
    if (last && last.kind === kind && kind === 'plain') last.text += text;
    else this.tokens.push({ kind, text });
  }
}

const NUM = /0[xX][\da-fA-F_]+[a-zA-Z]*|0[bB][01_]+[a-zA-Z]*|(?:\d[\d_]*(?:\.\d[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d+)?[a-zA-Z%]*/y;
const CHAR = /'(?:\\[^'\n]{1,10}|[^\\'\n])'/y;

function wordChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 36;
}

/** Index just past a string opened by quote q at i (or the line end / input end if unclosed). */
function stringEnd(s: string, i: number, q: string, multiline: boolean): number {
  let j = i + q.length;
  while (j < s.length) {
    const c = s[j];
    if (c === '\\') j += 2;
    else if (s.startsWith(q, j)) return j + q.length;
    else if (c === '\n' && !multiline) return j;
    else j++;
  }
  return s.length;
}

function scan(s: string, spec: Spec): Token[] {
  const out = new Out();
  const n = s.length;
  const isWord = (c: string | undefined) => !!c && (wordChar(c.charCodeAt(0)) || !!spec.extra?.includes(c));
  // Characters that may begin something other than plain text; runs of
  // anything else (spaces, operators) are taken in one step.
  const starts = new Set(
    [
      ...(spec.line ?? []).map((p) => p[0]),
      ...(spec.block ?? []).map(([o]) => o[0]),
      ...(spec.quotes ?? ''),
      ...(spec.multi ?? ''),
      ...(spec.extra ?? ''),
      spec.charLit ? "'" : '',
      spec.hash ? '#' : '',
      spec.at ? '@' : '',
      '.',
      '\n',
    ].filter(Boolean),
  );
  let lineStart = true; // YAML: only indentation and dashes since the last newline
  let i = 0;
  while (i < n) {
    const c = s[i];
    const start = i;
    let kind: TokKind | null = null;

    const lc = starts.has(c) ? spec.line?.find((p) => s.startsWith(p, i)) : undefined;
    const bc = starts.has(c) ? spec.block?.find(([o]) => s.startsWith(o, i)) : undefined;
    if (lc && !(spec.hashAtWord && lc === '#' && i > 0 && !/\s/.test(s[i - 1]))) {
      const e = s.indexOf('\n', i);
      i = e < 0 ? n : e;
      kind = 'com';
    } else if (bc) {
      const e = s.indexOf(bc[1], i + bc[0].length);
      i = e < 0 ? n : e + bc[1].length;
      kind = 'com';
    } else if (spec.triple && (s.startsWith('"""', i) || s.startsWith("'''", i))) {
      i = stringEnd(s, i, s.slice(i, i + 3), true);
      kind = 'str';
    } else if (spec.multi?.includes(c)) {
      i = stringEnd(s, i, c, true);
      kind = 'str';
    } else if (c === "'" && spec.charLit) {
      CHAR.lastIndex = i;
      const m = CHAR.exec(s);
      i += m ? m[0].length : 1;
      kind = m ? 'str' : 'plain';
    } else if (spec.quotes?.includes(c)) {
      i = stringEnd(s, i, c, false);
      kind = 'str';
    } else if ((c >= '0' && c <= '9') || (c === '.' && s[i + 1] >= '0' && s[i + 1] <= '9')) {
      NUM.lastIndex = i;
      i += NUM.exec(s)![0].length;
      kind = 'num';
    } else if ((c === '#' && spec.hash) || (c === '@' && spec.at)) {
      let j = i + 1;
      while (j < n && isWord(s[j])) j++;
      i = j;
      kind = j === start + 1 ? 'plain' : c === '@' ? spec.at! : spec.hash === 'color' ? 'num' : 'kw';
    } else if (isWord(c) && (wordChar(c.charCodeAt(0)) || isWord(s[i + 1]))) {
      while (i < n && isWord(s[i])) i++;
      const w = s.slice(start, i);
      if (spec.keys && lineStart && /^\s*:(\s|$)/.test(s.slice(i, i + 2))) kind = 'kw';
      else if (spec.kw.has(spec.ci ? w.toLowerCase() : w)) kind = 'kw';
      else kind = s[i] === '(' ? 'fn' : 'plain';
    } else {
      i++;
      while (i < n && !starts.has(s[i]) && !wordChar(s.charCodeAt(i))) i++;
      kind = 'plain';
    }
    const text = s.slice(start, i);
    out.push(kind, text);
    if (spec.keys) {
      // A YAML key may follow indentation and "- " list dashes.
      if (text.includes('\n')) lineStart = true;
      const rest = text.slice(text.lastIndexOf('\n') + 1);
      if (kind !== 'plain' || !/^[\s-]*$/.test(rest)) lineStart = false;
    }
  }
  return out.tokens;
}

const TAG = /<[/!?]?([A-Za-z][\w:.-]*)/y;

/** HTML / XML: comments, tag names, attribute names and values. */
function markup(s: string): Token[] {
  const out = new Out();
  const n = s.length;
  let i = 0;
  while (i < n) {
    if (s.startsWith('<!--', i)) {
      const e = s.indexOf('-->', i + 4);
      const end = e < 0 ? n : e + 3;
      out.push('com', s.slice(i, end));
      i = end;
      continue;
    }
    TAG.lastIndex = i;
    const m = TAG.exec(s);
    if (!m) {
      const e = s.indexOf('<', i + 1);
      const end = e < 0 ? n : e;
      out.push('plain', s.slice(i, end));
      i = end;
      continue;
    }
    out.push('plain', m[0].slice(0, m[0].length - m[1].length));
    out.push('kw', m[1]);
    i += m[0].length;
    // Attributes up to the closing ">".
    while (i < n && s[i] !== '>') {
      const c = s[i];
      if (c === '"' || c === "'") {
        const e = s.indexOf(c, i + 1);
        const end = e < 0 ? n : e + 1;
        out.push('str', s.slice(i, end));
        i = end;
      } else if (/[\w:-]/.test(c)) {
        let j = i;
        while (j < n && /[\w:.-]/.test(s[j])) j++;
        out.push('fn', s.slice(i, j));
        i = j;
      } else {
        out.push('plain', c);
        i++;
      }
    }
  }
  return out.tokens;
}
