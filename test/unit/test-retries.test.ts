import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import config from '../../vitest.config.js';

/**
 * The integration tests run against real clusters, and nothing retries them but a test itself. A
 * test may carry its own `retry` only when its assertions are about timing on a loaded machine:
 * on its `it(` (never on a `describe(`, which would retry every test in it), with a comment right
 * above saying why, and with no count of messages in its body. This reads every place a retry
 * can be set: the vitest config (top level and each project), the command lines that start vitest
 * (scripts/, .ci/run, package.json), and every `retry` in the integration files, whether in the
 * options of an `it(`, of a `describe(`, or in an options object made elsewhere.
 */

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const DIR = path.join(ROOT, 'test', 'integration');

/** Words that mean a test counts messages: a retry must never guard these. */
const COUNT_WORDS = /\b(toHaveLength|processed|lost|silentlyLost|unexpected|duplicated|duplicates|confirmed|delivered)\b/;

interface RetrySite {
  line: number;
  /** The call the retry belongs to: `it`, `describe`, or none (a retry outside any call's options). */
  owner: 'it' | 'describe' | 'none';
  comment: string;
  /** The owning `it`'s source, to its closing line. */
  body: string;
}

/** Every `retry` key in a file's source, with what it belongs to, the comment above, and the body. */
function retriesOf(source: string): RetrySite[] {
  const lines = source.split('\n');
  const out: RetrySite[] = [];
  lines.forEach((l, i) => {
    if (!/\bretry\b\s*[:=]/.test(l) && !/[{,]\s*retry\s*[,}]/.test(l)) return;
    if (/^\s*(\/\/|\*|\/\*)/.test(l)) return;
    // The call whose options hold it: an `it(` or `describe(` opened at most 4 lines above, with
    // no statement end between them.
    let start = i;
    while (start >= 0 && i - start <= 4 && !/\b(it|test|describe)(\.\w+)*\(/.test(lines[start]!) && !/;\s*$/.test(lines[start - 1] ?? ';')) start--;
    const call = start >= 0 && i - start <= 4 ? /\b(it|test|describe)(\.\w+)*\(/.exec(lines[start]!) : null;
    const owner: RetrySite['owner'] = call ? (call[1] === 'describe' ? 'describe' : 'it') : 'none';
    const from = call ? start : i;
    const comment: string[] = [];
    for (let j = from - 1; j >= 0 && /^\s*(\/\/|\*|\/\*)/.test(lines[j]!); j--) comment.unshift(lines[j]!.trim());
    let body = '';
    if (owner === 'it') {
      const indent = /^\s*/.exec(lines[from]!)![0];
      let end = from + 1;
      while (end < lines.length && !lines[end]!.startsWith(`${indent}});`)) end++;
      body = lines.slice(from, end + 1).join('\n');
    }
    out.push({ line: i + 1, owner, comment: comment.join(' '), body });
  });
  return out;
}

/** The complaints about one retry: empty when it is allowed. */
function problemsOf(r: RetrySite): string[] {
  const p: string[] = [];
  if (r.owner !== 'it') p.push(`a retry outside an it's options (${r.owner === 'describe' ? 'on a describe' : 'in an object made elsewhere'})`);
  if (r.comment === '') p.push('no comment above saying why');
  const count = COUNT_WORDS.exec(r.body.replace(/\/\/.*$/gm, '').replace(/^\s*\*.*$/gm, ''));
  if (count) p.push(`its body counts messages ("${count[1]}")`);
  return p;
}

describe('retries in the integration tests', () => {
  it.each([
    ['no comment', "it('x', { retry: 1 }, async () => {\n});", [['no comment above saying why']]],
    ['a comment above the it', "// timing: a delay measured on a loaded machine\nit('x', { retry: 1 }, async () => {\n});", [[]]],
    ['options on their own line', "// why\nit(\n  'x',\n  {\n    retry: 2,\n  }, async () => {\n});", [[]]],
    ['a retry that is not a digit', "// why\nit('x', { retry: RETRIES }, async () => {\n});", [[]]],
    ['shorthand', "// why\nit('x', { retry }, async () => {\n});", [[]]],
    ['on a describe', "// why\ndescribe('x', { retry: 1 }, () => {\n});", [["a retry outside an it's options (on a describe)"]]],
    [
      'an options object made elsewhere',
      "// why\nconst opts = { retry: 1 };\nit('x', opts, async () => {\n});",
      [["a retry outside an it's options (in an object made elsewhere)"]],
    ],
    [
      'a retried test that counts',
      "// timing\nit('x', { retry: 1 }, async () => {\n  expect(d.measured).toHaveLength(2);\n  expect(d.processed).toBe(2);\n});",
      [['its body counts messages ("toHaveLength")']],
    ],
    [
      'a count only in a comment',
      "// timing\nit('x', { retry: 1 }, async () => {\n  // nothing lost here is checked\n  expect(ms).toBeLessThan(5);\n});",
      [[]],
    ],
    ['none', "it('x', async () => {});", []],
  ])('reads %s', (_name, source, problems) => {
    expect(retriesOf(source).map(problemsOf)).toEqual(problems);
  });

  const files = readdirSync(DIR).filter((f) => f.endsWith('.ts'));
  it('finds the integration files', () => expect(files.length).toBeGreaterThan(20));
  it.each(files)('%s: every retry is on a timing it, says why, and guards no count', (file) => {
    for (const r of retriesOf(readFileSync(path.join(DIR, file), 'utf8'))) expect(problemsOf(r), `${file}:${r.line}`).toEqual([]);
  });

  it('the vitest config retries nothing, at the top or in any project', () => {
    expect(config.test?.retry).toBeUndefined();
    const projects = (config.test?.projects ?? []) as { test?: { name?: string; retry?: number } }[];
    expect(projects.map((p) => p.test?.name)).toEqual(['unit', 'integration']);
    for (const p of projects) expect(p.test?.retry, p.test?.name).toBeUndefined();
  });

  it('no command line that starts vitest asks for a retry', () => {
    const scripts = readdirSync(path.join(ROOT, 'scripts')).map((f) => path.join('scripts', f));
    for (const f of [...scripts, '.ci/run', 'package.json']) {
      expect(readFileSync(path.join(ROOT, f), 'utf8'), f).not.toMatch(/--retry\b/);
    }
  });
});
