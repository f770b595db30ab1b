import { CommanderError, type Option } from 'commander';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { emit, writeOutputs } from '../../src/cli/output.js';
import { createProgram } from '../../src/cli/program.js';
import { ExitCode, OutputError } from '../../src/errors.js';
import { captureOutput, leaves, parse } from './program-harness.js';

/**
 * One rule for every file a command writes (--html, --ledger, --csv, --outbox, --store, report -o):
 * checked when the command line is parsed (its folder exists and is writable, it is not a folder;
 * no folder is created), and written after the result is printed, so that a write that still
 * fails costs the file, not the result (OutputError, exit 74).
 */

const dir = mkdtempSync(path.join(os.tmpdir(), 'rmq-bench-output-paths-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Options that name a file to read, not to write. */
const INPUTS = new Set(['verify --ledger']);

const outputOptions = leaves(createProgram(async () => undefined))
  .flatMap(([words, command]) => command.options.map((option: Option) => ({ words, option })))
  .filter(({ words, option }) => /<file>/.test(option.flags) && !INPUTS.has(`${words.join(' ')} ${option.long}`))
  .map(({ words, option }) => ({ name: `${words.join(' ')} ${option.long}`, words, flag: option.long! }));

const { stderr, stdout } = captureOutput();

/** What else a command needs to parse (report: its inputs). */
const extra = (words: string[]): string[] => (words[0] === 'report' ? ['in.json'] : []);

describe('output paths: checked at parse time, the same way for every option that writes', () => {
  it('finds them all (the walk is not empty)', () => {
    const names = outputOptions.map((o) => o.name);
    for (const n of [
      'producer --ledger',
      'producer --outbox',
      'consumer --store',
      'chaos --store',
      'bench --csv',
      'report --html',
      'compare --html',
      'audit --html',
    ]) {
      expect(names).toContain(n);
    }
  });

  it.each(outputOptions)('$name in a folder that does not exist: refused before anything runs, the folder not created', async ({ words, flag }) => {
    const file = path.join(dir, 'missing', 'out.file');
    const { err, calls } = await parse([...words, ...extra(words), flag, file]);
    expect(calls).toEqual([]);
    expect((err as CommanderError).code).toBe('commander.invalidArgument');
    expect(stderr.join('')).toContain(`directory '${path.join(dir, 'missing')}' does not exist or is not writable`);
  });

  it.each(outputOptions)('$name naming a folder: refused', async ({ words, flag }) => {
    const { err, calls } = await parse([...words, ...extra(words), flag, dir]);
    expect(calls).toEqual([]);
    expect(err).toBeInstanceOf(CommanderError);
    expect(stderr.join('')).toContain(`'${dir}' is a directory`);
  });
});

describe('writeOutputs: after the result, every file attempted, one OutputError for the failures', () => {
  it('writes each file and announces it', () => {
    const a = path.join(dir, 'a.txt');
    writeOutputs([{ flag: '--html', path: a, content: () => 'A', announce: `HTML report: ${a}` }]);
    expect(readFileSync(a, 'utf8')).toBe('A');
    expect(stderr.join('')).toBe(`HTML report: ${a}\n`);
  });

  it('a failing write does not stop the next; then OutputError (exit 74) names it', () => {
    const b = path.join(dir, 'b.txt');
    let caught: unknown;
    try {
      writeOutputs([
        { flag: '--ledger', path: path.join(dir, 'gone', 'r.json'), content: () => '{}' },
        { flag: '--csv', path: b, content: () => 'B' },
      ]);
    } catch (e) {
      caught = e;
    }
    expect(readFileSync(b, 'utf8')).toBe('B');
    expect(caught).toBeInstanceOf(OutputError);
    expect((caught as OutputError).exitCode).toBe(ExitCode.outputFailed);
    expect(ExitCode.outputFailed).toBe(74);
    expect((caught as OutputError).message).toBe(`could not write --ledger ${path.join(dir, 'gone', 'r.json')} (ENOENT)`);
  });

  it('emit prints the result (stderr text, stdout JSON) before a file that cannot be written', () => {
    const gone = path.join(dir, 'gone-later', 'r.html');
    expect(() => emit({ json: true, html: gone, broker: null }, 'cluster-down', { elapsedMs: 5, volumes: false }, { text: 'the summary' })).toThrow(
      OutputError,
    );
    expect(stderr.join('')).toBe('the summary\n');
    expect(JSON.parse(stdout.join(''))).toMatchObject({ kind: 'cluster-down', elapsedMs: 5, volumes: false });
  });
});
