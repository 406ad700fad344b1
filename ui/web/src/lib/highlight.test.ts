import { describe, expect, it } from 'vitest';
import { highlight, language, type TokKind } from './highlight';

/** The tokens of one kind, as their texts. */
const kinds = (code: string, lang: string, kind: TokKind) =>
  highlight(code, lang).filter((t) => t.kind === kind).map((t) => t.text);

const samples: [string, string][] = [
  ['ts', 'const greet = (n: string) => `hi ${n}`; // say hi\nexport function f() { return 0x1F + 1.5e3; } /* end'],
  ['python', 'def f(x):\n    """doc\n    string"""\n    return x * 2  # double\n@cache\nclass A: pass'],
  ['go', 'package main\n\nfunc main() {\n\ts := `raw\nline`\n\tfmt.Println("hi", 42) // print\n}'],
  ['rust', "fn longest<'a>(x: &'a str) -> char { let c = 'x'; println!(\"{}\", c); 'y' }"],
  ['cpp', '#include <stdio.h>\nint main(void) { printf("%d\\n", 3); /* c */ return 0; }'],
  ['bash', 'if [ -n "$1" ]; then echo \'hi\' # greet\nfi\necho $# ${#arr[@]}'],
  ['json', '{"a": [1, -2.5, true, null], "b": "x\\"y"}'],
  ['sql', "SELECT id, count(*) FROM users WHERE name = 'x' -- who\nORDER BY id;"],
  ['html', '<!-- c --><div class="a" data-x=\'1\'>Hi &amp; <b>there</b></div><br/>'],
  ['css', '@media (max-width: 600px) { .a { color: #fff; margin: 0 1.5rem !important; } } /* c */'],
  ['yaml', '# config\nname: app\nsteps:\n  - run-on: "linux"\n    retries: 3\n    enabled: true'],
  ['brainfuck', '++[>+<-]'],
];

describe('highlight', () => {
  it.each(samples)('%s: concatenated tokens give the input back', (lang, code) => {
    expect(highlight(code, lang).map((t) => t.text).join('')).toBe(code);
  });

  it('marks JS/TS keywords, strings, comments, numbers and calls', () => {
    const code = samples[0][1];
    expect(kinds(code, 'ts', 'kw')).toEqual(['const', 'string', 'export', 'function', 'return']);
    expect(kinds(code, 'ts', 'str')).toEqual(['`hi ${n}`']);
    expect(kinds(code, 'ts', 'com')).toEqual(['// say hi', '/* end']);
    expect(kinds(code, 'ts', 'num')).toEqual(['0x1F', '1.5e3']);
    expect(kinds(code, 'ts', 'fn')).toEqual(['f']);
  });

  it('handles Python triple quotes, # comments and decorators', () => {
    const code = samples[1][1];
    expect(kinds(code, 'py', 'str')).toEqual(['"""doc\n    string"""']);
    expect(kinds(code, 'py', 'com')).toEqual(['# double']);
    expect(kinds(code, 'py', 'kw')).toEqual(['def', 'return', 'class', 'pass']);
    expect(kinds(code, 'py', 'fn')).toEqual(['f', '@cache']);
  });

  it('handles Go raw strings and Rust lifetimes vs char literals', () => {
    expect(kinds(samples[2][1], 'go', 'str')).toEqual(['`raw\nline`', '"hi"']);
    expect(kinds(samples[2][1], 'go', 'kw')).toEqual(['package', 'func']);
    expect(kinds(samples[3][1], 'rust', 'str')).toEqual(["'x'", '"{}"', "'y'"]);
  });

  it('handles C directives, shell comments only at word starts, SQL in any case', () => {
    expect(kinds(samples[4][1], 'cpp', 'kw')).toEqual(['#include', 'int', 'void', 'return']);
    expect(kinds(samples[5][1], 'bash', 'com')).toEqual(['# greet']);
    expect(kinds(samples[5][1], 'sh', 'str')).toEqual(['"$1"', "'hi'"]);
    expect(kinds(samples[7][1], 'sql', 'kw')).toEqual(['SELECT', 'count', 'FROM', 'WHERE', 'ORDER', 'BY']);
    expect(kinds(samples[7][1], 'sql', 'com')).toEqual(['-- who']);
  });

  it('handles JSON, HTML, CSS and YAML', () => {
    expect(kinds(samples[6][1], 'json', 'str')).toEqual(['"a"', '"b"', '"x\\"y"']);
    expect(kinds(samples[6][1], 'json', 'kw')).toEqual(['true', 'null']);
    expect(kinds(samples[8][1], 'html', 'kw')).toEqual(['div', 'b', 'b', 'div', 'br']);
    expect(kinds(samples[8][1], 'xml', 'str')).toEqual(['"a"', "'1'"]);
    expect(kinds(samples[8][1], 'html', 'com')).toEqual(['<!-- c -->']);
    expect(kinds(samples[9][1], 'css', 'kw')).toEqual(['@media', 'important']);
    expect(kinds(samples[9][1], 'css', 'num')).toEqual(['600px', '#fff', '0', '1.5rem']);
    expect(kinds(samples[10][1], 'yml', 'kw')).toEqual(['name', 'steps', 'run-on', 'retries', 'enabled', 'true']);
    expect(kinds(samples[10][1], 'yaml', 'com')).toEqual(['# config']);
  });

  it('leaves unknown languages plain', () => {
    expect(language('Brainfuck')).toBe('');
    expect(highlight('++[>+<-]', 'brainfuck')).toEqual([{ kind: 'plain', text: '++[>+<-]' }]);
    expect(highlight('', 'js')).toEqual([]);
    expect(language('TSX')).toBe('ts');
  });
});
