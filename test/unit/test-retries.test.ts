import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The integration tests run against real clusters; vitest.config.ts retries none of them. A test
 * may carry its own `retry:` only when its assertions are about timing on a loaded machine, and
 * then a comment right above it (on the lines before its `it(`) says why. This reads the files
 * and holds every `retry:` to that.
 */

const DIR = path.resolve(import.meta.dirname, '..', 'integration');

/** Every `retry:` in a file, with the comment lines right above the `it(` or `describe(` it belongs to. */
function retriesOf(source: string): { line: number; comment: string }[] {
  const lines = source.split('\n');
  const out: { line: number; comment: string }[] = [];
  lines.forEach((l, i) => {
    if (!/\bretry:\s*\d/.test(l)) return;
    let start = i;
    while (start >= 0 && !/\b(it|test|describe)(\.\w+)*\(/.test(lines[start]!)) start--;
    const comment: string[] = [];
    for (let j = start - 1; j >= 0 && /^\s*(\/\/|\*|\/\*)/.test(lines[j]!); j--) comment.unshift(lines[j]!.trim());
    out.push({ line: i + 1, comment: comment.join(' ') });
  });
  return out;
}

describe('retries in the integration tests', () => {
  it.each([
    ['no comment', "it('x', { retry: 1 }, async () => {});", ['']],
    [
      'a comment above the it',
      "// timing: a delay measured on a loaded machine\nit('x', { retry: 1 }, async () => {});",
      ['// timing: a delay measured on a loaded machine'],
    ],
    ['options on their own line', "// why\nit(\n  'x',\n  {\n    retry: 2,\n  },", ['// why']],
    ['none', "it('x', async () => {});", []],
  ])('reads %s', (_name, source, comments) => {
    expect(retriesOf(source).map((r) => r.comment)).toEqual(comments);
  });

  const files = readdirSync(DIR).filter((f) => f.endsWith('.ts'));
  it('finds the integration files', () => expect(files.length).toBeGreaterThan(20));
  it.each(files)('%s: every retry comes with a comment that says why', (file) => {
    for (const r of retriesOf(readFileSync(path.join(DIR, file), 'utf8'))) expect(r.comment, `${file}:${r.line}`).not.toBe('');
  });
});
