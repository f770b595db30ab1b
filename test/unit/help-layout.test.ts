import type { Command } from 'commander';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ENVIRONMENT } from '../../src/cli/help.js';
import { createProgram } from '../../src/cli/program.js';
import { captureOutput, parse } from './program-harness.js';

/**
 * --help fits its terminal: every line of the root help and of each command's help within 80
 * columns when stdout is not a terminal, within the terminal's width when it is (examples
 * excepted: a command line is never wrapped); the root help lists every command under exactly
 * one heading, each on one line.
 */

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const { stdout } = captureOutput();

/** stdout as a pipe (no isTTY, no columns) or as a terminal `columns` wide, for one test. */
function stdoutIs(columns: number | undefined): void {
  Object.defineProperty(process.stdout, 'isTTY', { value: columns !== undefined, configurable: true });
  Object.defineProperty(process.stdout, 'columns', { value: columns, configurable: true });
}
beforeEach(() => stdoutIs(undefined));
afterEach(() => {
  // Back to the stream's own (inherited) properties.
  delete (process.stdout as { isTTY?: boolean }).isTTY;
  delete (process.stdout as { columns?: number }).columns;
});

/** Every command's argv words: [] for the root, ['cluster'], ['cluster', 'up'], ... */
function everyPath(c: Command, prefix: string[] = []): string[][] {
  return [prefix, ...c.commands.flatMap((sub) => everyPath(sub, [...prefix, sub.name()]))];
}
const PATHS = everyPath(createProgram(async () => undefined));

/** `rmq-bench <words> --help` as printed on stdout. */
async function helpOf(words: string[]): Promise<string> {
  stdout.length = 0;
  await parse([...words, '--help']);
  return stdout.join('');
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** Each item's description joined back to one line (its wrapped lines are indented further than its term). */
const unwrapped = (help: string): string => help.replace(/\n {3,}/g, ' ');
const isExample = (line: string): boolean => /^ {2}\$ rmq-bench /.test(line);
const tooWide = (text: string, width: number): string[] => text.split('\n').filter((l) => [...l].length > width);

describe('every --help within 80 columns when stdout is not a terminal', () => {
  it('finds every command (not an empty table)', () => expect(PATHS.length).toBeGreaterThan(25));
  it.each(PATHS.map((words) => [words.join(' ') || '(root)', words] as const))('%s', async (_name, words) => {
    const help = await helpOf(words);
    expect(help).toMatch(/^Usage: rmq-bench/);
    expect(tooWide(help, 80)).toEqual([]);
  });
});

describe("on a terminal: wrapped to the terminal's width", () => {
  it.each([60, 100])('%d columns: every line fits but the examples', async (columns) => {
    stdoutIs(columns);
    for (const words of PATHS) {
      const lines = tooWide(await helpOf(words), columns).filter((l) => !isExample(l));
      expect(lines, `rmq-bench ${words.join(' ')} --help`).toEqual([]);
    }
  });

  it('a description too narrow beside its term goes under it, wrapped', async () => {
    stdoutIs(50);
    const help = await helpOf(['producer']);
    expect(help).toMatch(/^ {2}--confirm-mode <mode>\n {6}sync: one at a time;/m);
    expect(tooWide(help, 50).filter((l) => !isExample(l))).toEqual([]);
  });
});

/** The root help's command list: heading → the names under it. */
function groups(help: string): Map<string, string[]> {
  const result = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of help.split('\n')) {
    const heading = /^([A-Z][a-z]+(?: [a-z]+)* commands|Commands):$/.exec(line);
    if (heading) {
      current = [];
      result.set(heading[1]!, current);
    } else if (line === '') current = undefined;
    else if (current) current.push(/^ {2}(\S+)/.exec(line)![1]!);
  }
  return result;
}

describe('the root help groups the commands', () => {
  it('every command under exactly one heading, none under the catch-all "Commands:"', async () => {
    const listed = groups(await helpOf([]));
    expect(listed.has('Commands')).toBe(false);
    expect(listed.size).toBeGreaterThan(3);
    const names = [...listed.values()].flat();
    const program = createProgram(async () => undefined);
    expect([...names].sort()).toEqual([...program.commands.map((c) => c.name()), 'help'].sort());
    expect(new Set(names).size).toBe(names.length);
  });

  it('every file under src/cli/commands/ is a command of the program', () => {
    const files = readdirSync(path.join(ROOT, 'src', 'cli', 'commands')).map((f) => path.basename(f, '.ts'));
    const program = createProgram(async () => undefined);
    expect(program.commands.map((c) => c.name()).sort()).toEqual(files.sort());
  });
});

describe('summaries: one line each in the list of its parent, at 80 columns', () => {
  const program = createProgram(async () => undefined);
  const listed = program.commands.flatMap((c) => [[[], c] as const, ...c.commands.map((sub) => [[c.name()], sub] as const)]);
  it.each(listed.map(([parent, c]) => [[...parent, c.name()].join(' '), parent, c] as const))('%s', async (_name, parent, c) => {
    const line = `${c.summary() || c.description()}`;
    expect((await helpOf([...parent])).split('\n')).toContainEqual(expect.stringMatching(new RegExp(`^ {2}${c.name()} +${escapeRegExp(line)}$`)));
  });

  it("a command's own help keeps its long description", async () => {
    const help = await helpOf(['chaos']);
    expect(help).toContain('a long run under a nemesis');
    expect(program.commands.find((c) => c.name() === 'chaos')!.summary()).not.toBe('');
  });

  it('every command listed at the root has a summary shorter than its description, or is a group', () => {
    for (const c of program.commands.filter((c) => c.commands.length === 0)) {
      expect(c.summary(), c.name()).not.toBe('');
      expect(c.summary().length, c.name()).toBeLessThan(c.description().length);
    }
  });
});

describe('one style for defaults and required options', () => {
  it('required options say so (commander does not)', async () => {
    expect(unwrapped(await helpOf(['verify']))).toMatch(/^ {2}--ledger <file> .*\(required\)$/m);
    expect(unwrapped(await helpOf(['report']))).toMatch(/^ {2}--html <file> .*\(required\)$/m);
  });

  it('every default is written "(default: x)"', async () => {
    const offenders: string[] = [];
    for (const words of PATHS) {
      offenders.push(
        ...unwrapped(await helpOf(words))
          .split('\n')
          .filter((l) => /\(default(?!: )|; default\b/.test(l)),
      );
    }
    offenders.push(...ENVIRONMENT.map(([, meaning]) => meaning).filter((m) => /\(default(?!: )/.test(m)));
    expect(offenders).toEqual([]);
  });
});
