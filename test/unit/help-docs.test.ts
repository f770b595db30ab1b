import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENVIRONMENT, EXIT_CODES } from '../../src/cli/help.js';
import { ExitCode } from '../../src/errors.js';

/** The root --help, the README and the code agree: every variable read, every exit code. */

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** RMQ_BENCH_* read as `env.X` / `process.env.X` in src/ (the per-node variables handed to compose are written, not read). */
const read = new Set(sources(path.join(ROOT, 'src')).flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/env\.(RMQ_BENCH_[A-Z_]+)/g)].map((m) => m[1]!)));

describe('environment variables: read in src, listed in --help and in the README Settings table', () => {
  it('src reads some (the scan works)', () => expect(read.size).toBeGreaterThan(10));
  it.each([...read])('%s is in the root help', (name) => {
    expect(ENVIRONMENT.map(([n]) => n)).toContain(name);
  });
  it.each(ENVIRONMENT.map(([n]) => n))('%s is in the README Settings table', (name) => {
    expect(readme).toMatch(new RegExp(`^\\| \`${name}\` \\|`, 'm'));
  });
});

describe('exit codes: every ExitCode in --help and in the README table', () => {
  const codes = [...new Set(Object.values(ExitCode))];
  it.each(codes)('%d', (code) => {
    expect(EXIT_CODES.map(([c]) => c)).toContain(code);
    expect(readme).toMatch(new RegExp(`^\\| ${code} \\| `, 'm'));
  });
});
