import { type Command, CommanderError, type Option } from 'commander';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { splitArgs } from '../../scripts/workshop.mjs';
import { ENVIRONMENT } from '../../src/cli/help.js';
import { createProgram } from '../../src/cli/program.js';
import { loadConfig } from '../../src/config.js';
import { FAULT_KINDS } from '../../src/faults/kinds.js';
import { TEXT_COLUMNS } from '../../src/report/text-wrap.js';
import { captureOutput, invocationOf, leaves, parse } from './program-harness.js';

/**
 * The documents against the program. docs/COMMANDS.md's synopses name only options their command
 * has, with the program's defaults and complete choice lists, and every option of every command;
 * every command line the README, COMMANDS.md and DEVELOPMENT.md show parses; the README lists
 * every command, its Settings defaults are loadConfig's, and it is a manual: under 400 lines, no
 * commit hash, no date outside a results table, no session history.
 */

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const DOCS = ['README.md', 'docs/COMMANDS.md', 'docs/DEVELOPMENT.md', 'docs/CI.md'] as const;
const text = (file: string): string => readFileSync(path.join(ROOT, file), 'utf8');

// --- Markdown ---------------------------------------------------------------------------------

interface MdLine {
  /** 1-based. */
  readonly line: number;
  readonly text: string;
  /** The language of the fenced block the line is in ('' for a bare fence), or null outside one. Fences count as inside. */
  readonly fence: string | null;
}

function mdLines(markdown: string): MdLine[] {
  let fence: string | null = null;
  return markdown.split('\n').map((t, i) => {
    const opening = /^\s*```(\S*)\s*$/.exec(t);
    if (opening && fence === null) {
      fence = opening[1]!;
      return { line: i + 1, text: t, fence };
    }
    const inside = fence;
    if (opening && fence !== null) fence = null;
    return { line: i + 1, text: t, fence: inside };
  });
}

/** Cut a shell line at its comment: a `#` at a word's start, outside quotes. */
function withoutComment(line: string): string {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote !== null) {
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) return line.slice(0, i);
  }
  return line;
}

/** A command line of a ```sh block: what follows `rmq-bench`, with `$ `, `VAR=value` and `npx` before it dropped. */
interface ShellCommand {
  readonly file: string;
  readonly line: number;
  readonly rest: string;
}

function shellCommands(file: string, markdown = text(file)): ShellCommand[] {
  const out: ShellCommand[] = [];
  let pending: { line: number; text: string } | null = null;
  for (const l of mdLines(markdown)) {
    if (l.fence !== 'sh' || /^\s*```/.test(l.text)) continue;
    const joined: { line: number; text: string } = pending
      ? { line: pending.line, text: `${pending.text.trimEnd()} ${l.text.trim()}` }
      : { line: l.line, text: l.text };
    if (/\\\s*$/.test(joined.text)) {
      pending = { line: joined.line, text: joined.text.replace(/\\\s*$/, '') };
      continue;
    }
    pending = null;
    const m = /^(?:\$\s+)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?:npx\s+)?rmq-bench\s+(.*)$/.exec(withoutComment(joined.text).trim());
    if (m) out.push({ file, line: joined.line, rest: m[1]!.trim() });
  }
  return out;
}

/** A synopsis shows brackets, placeholders or choices (`a|b`); an example is a line to run as it is. */
const isSynopsis = (rest: string): boolean => /[[<]|\S\|\S/.test(rest.replace(/'[^']*'|"[^"]*"/g, ''));

/** An example's argv: the words before a redirection or a pipe. */
function exampleArgs(rest: string): string[] {
  const words = splitArgs(rest);
  const end = words.findIndex((w) => /^(\d?>>?|\||&&|;|2>&1)/.test(w));
  return end === -1 ? words : words.slice(0, end);
}

// --- The program -----------------------------------------------------------------------------------

const program = createProgram(async () => undefined);
const LEAVES = leaves(program);

/** The runnable command a line starts with (the longest prefix of its words that names one), and its words after that. */
function commandOf(words: readonly string[]): { name: string; command: Command; rest: string[] } | undefined {
  let best: [string[], Command] | undefined;
  for (const [names, command] of LEAVES) {
    if (names.every((n, i) => words[i] === n) && (!best || names.length > best[0].length)) best = [names, command];
  }
  return best && { name: best[0].join(' '), command: best[1], rest: words.slice(best[0].length) };
}

const findOption = (command: Command, flag: string): Option | undefined => command.options.find((o) => o.long === flag || o.short === flag);

/**
 * The default of an option as --help shows it: commander's defaultValueDescription, or its
 * defaultValue (a list also as `a,b`); never a duration's milliseconds. For an option without a
 * defaultValue, what its description says: `(default: 10s without -n)` gives 10s, `(default: 3,
 * with --strategy 200)` gives 3 and 200.
 */
function displayedDefaults(o: Option): string[] {
  if (o.defaultValue !== undefined) {
    const shown = [o.defaultValueDescription ?? String(o.defaultValue)];
    return Array.isArray(o.defaultValue) ? [...shown, o.defaultValue.join(',')] : shown;
  }
  return [...(o.description ?? '').matchAll(/\(default:?\s*([^()]*)\)/g)].flatMap(([, said]) => [
    said!.split(/[\s,]+/)[0]!,
    ...[...said!.matchAll(/with --[\w-]+ ([^\s,]+)/g)].map((m) => m[1]!),
  ]);
}

// --- Synopses --------------------------------------------------------------------------------------

/** A synopsis as words and bracketed groups; a group holds its ` | `-separated alternatives. */
type SynopsisNode = { readonly word: string } | { readonly alternatives: SynopsisNode[][] };

function parseSynopsis(line: string): SynopsisNode[] {
  let i = 0;
  const sequence = (closing: boolean): SynopsisNode[][] => {
    const alternatives: SynopsisNode[][] = [[]];
    while (i < line.length) {
      const c = line[i]!;
      if (c === ' ') i++;
      else if (c === ']') {
        if (!closing) throw new Error(`an unopened ']' at column ${i + 1}`);
        i++;
        return alternatives;
      } else if (c === '[') {
        i++;
        alternatives.at(-1)!.push({ alternatives: sequence(true) });
      } else if (c === '|' && (line[i + 1] ?? ' ') === ' ') {
        alternatives.push([]);
        i++;
      } else {
        let word = '';
        while (i < line.length && !' []'.includes(line[i]!)) {
          const quote = line[i] === "'" || line[i] === '"' ? line[i]! : null;
          const end = quote ? line.indexOf(quote, i + 1) + 1 || line.length : i + 1;
          word += line.slice(i, end);
          i = end;
        }
        alternatives.at(-1)!.push({ word });
      }
    }
    if (closing) throw new Error("a '[' without its ']'");
    return alternatives;
  };
  const top = sequence(false);
  if (top.length !== 1) throw new Error("a ' | ' outside brackets");
  return top[0]!;
}

/** One `--flag [value]` a synopsis shows. */
interface Shown {
  readonly flag: string;
  readonly option: Option | undefined;
  readonly value: string | undefined;
  /** `--flag=value`: a spelling, not a default. */
  readonly spelled: boolean;
  readonly bracketed: boolean;
}

function shownFlags(nodes: readonly SynopsisNode[], command: Command, bracketed: boolean, out: Shown[] = []): Shown[] {
  for (let k = 0; k < nodes.length; k++) {
    const node = nodes[k]!;
    if ('alternatives' in node) {
      for (const alternative of node.alternatives) shownFlags(alternative, command, true, out);
      continue;
    }
    if (!node.word.startsWith('-')) continue; // an argument (or a value, taken below)
    const eq = node.word.indexOf('=');
    const flag = eq === -1 ? node.word : node.word.slice(0, eq);
    const option = findOption(command, flag);
    let value = eq === -1 ? undefined : node.word.slice(eq + 1);
    const next = nodes[k + 1];
    if (value === undefined && option && (option.required || option.optional) && next && 'word' in next && !next.word.startsWith('-')) {
      value = next.word;
      k++;
    }
    out.push({ flag, option, value, spelled: eq !== -1, bracketed });
  }
  return out;
}

/** What is wrong with one `--flag value` of a synopsis, against the command's own option. */
function flagProblems(s: Shown): string[] {
  const o = s.option;
  if (!o) return [`${s.flag}: no such option`];
  if (o.hidden) return [`${s.flag}: a hidden option`];
  if (s.value === undefined) return o.required ? [`${s.flag} takes a value (<${o.flags.replace(/^.*<(.*)>.*$/, '$1')}>)`] : [];
  if (s.spelled || /^<.*>$/.test(s.value)) return [];
  const problems: string[] = [];
  const choices = s.value.split('|');
  const defaults = displayedDefaults(o);
  if (choices.length > 1 && o.argChoices) {
    const [missing, extra] = [o.argChoices.filter((c) => !choices.includes(c)), choices.filter((c) => !o.argChoices!.includes(c))];
    if (missing.length + extra.length > 0) problems.push(`${s.flag}: the choices are ${o.argChoices.join('|')}, not ${s.value}`);
  } else if (choices.length > 1) {
    const said = new Set((o.description ?? '').split(/[^\w-]+/));
    const unknown = choices.filter((c) => !said.has(c));
    if (unknown.length > 0) problems.push(`${s.flag}: ${unknown.join(', ')} not among the values its description names`);
  }
  if (s.bracketed && (choices.length === 1 || defaults.length > 0) && !defaults.includes(choices[0]!)) {
    problems.push(`${s.flag}: shows the default ${choices[0]}, the program's is ${defaults.length > 0 ? defaults.join(' or ') : 'none'}`);
  }
  return problems;
}

/** What is wrong with a synopsis line (empty: nothing). */
function synopsisProblems(rest: string): string[] {
  const found = commandOf(splitArgs(rest));
  if (!found) return [`no command: rmq-bench ${rest}`];
  const nodes = parseSynopsis(rest.split(/\s+/).slice(found.name.split(' ').length).join(' '));
  return shownFlags(nodes, found.command, false).flatMap(flagProblems);
}

/** The flags the COMMANDS.md section "Shared options and conventions" lists in its bullets. */
function sharedFlags(markdown: string): string[] {
  const section = markdown.split(/^## /m).find((s) => s.startsWith('Shared options')) ?? '';
  return section
    .split('\n')
    .filter((l) => l.startsWith('- `'))
    .flatMap((l) => [...l.slice(0, l.indexOf(': ')).matchAll(/`(--[a-z][\w-]*)/g)].map((m) => m[1]!));
}

// --- Manual, not a notebook --------------------------------------------------------------------

/** Words that look like a commit hash: 7 to 40 lower-case hex digits, at least one digit and one letter, not a `#colour`. */
const HASH = /(?<![#\w-])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w-])/g;
const ISO_DATE = /(?<!\d)\d{4}-\d{2}-\d{2}(?!\d)/g;
/** Phrases that tell a document's history rather than what holds. */
const HISTORY = [
  /\bused to\b/i,
  /\ban earlier (change|version|commit)\b/i,
  /\bonce took\b/i,
  /\bno longer\b/i,
  /\bbefore this (change|fix|demo)\b/i,
  /\bissue #\d+/i,
];

/** Commit hashes outside fenced code blocks. */
const hashesIn = (markdown: string): string[] =>
  mdLines(markdown).flatMap((l) => (l.fence === null ? [...l.text.matchAll(HASH)].map((m) => `line ${l.line}: ${m[0]}`) : []));
/** ISO dates outside fenced code blocks and tables. */
const datesIn = (markdown: string): string[] =>
  mdLines(markdown).flatMap((l) =>
    l.fence === null && !l.text.trimStart().startsWith('|') ? [...l.text.matchAll(ISO_DATE)].map((m) => `line ${l.line}: ${m[0]}`) : [],
  );
const historyIn = (markdown: string): string[] =>
  mdLines(markdown).flatMap((l) => (l.fence === null ? HISTORY.filter((re) => re.test(l.text)).map((re) => `line ${l.line}: ${re.source}`) : []));

// --- Tests -------------------------------------------------------------------------------------------

// commander's messages for the refused lines, kept out of the test log.
captureOutput();

const commands = text('docs/COMMANDS.md');
const readme = text('README.md');
const allCommands = DOCS.flatMap((f) => shellCommands(f));
const synopses = allCommands.filter((c) => isSynopsis(c.rest));
const examples = allCommands.filter((c) => !isSynopsis(c.rest));

describe('docs/COMMANDS.md: each synopsis against the program', () => {
  it.each(synopses.map((s) => ({ ...s, shown: `rmq-bench ${s.rest.slice(0, 60)}` })))('$file:$line $shown', ({ rest }) => {
    expect(synopsisProblems(rest)).toEqual([]);
  });

  it.each(LEAVES.map(([names, command]) => ({ name: names.join(' '), command })))('$name: a synopsis, holding every option', ({ name, command }) => {
    const own = synopses.filter((s) => s.file === 'docs/COMMANDS.md' && commandOf(splitArgs(s.rest))?.name === name);
    expect(own.length, `docs/COMMANDS.md has no synopsis of rmq-bench ${name}`).toBeGreaterThan(0);
    const shown = new Set(own.flatMap((s) => shownFlags(parseSynopsis(s.rest), command, false).map((f) => f.option)));
    const shared = sharedFlags(commands);
    const missing = command.options.filter((o) => !o.hidden && !shown.has(o) && !shared.includes(o.long ?? ''));
    expect(
      missing.map((o) => o.flags),
      `options of rmq-bench ${name} in no synopsis of docs/COMMANDS.md nor in its shared options`,
    ).toEqual([]);
  });

  it('lists shared options that some command has', () => {
    const shared = sharedFlags(commands);
    expect(shared.length).toBeGreaterThan(5);
    for (const flag of shared)
      expect(
        LEAVES.some(([, c]) => findOption(c, flag)),
        flag,
      ).toBe(true);
  });
});

describe('the synopsis check refuses what --help contradicts', () => {
  it.each([
    ['consumer-crash [--runs 5]', "--runs: shows the default 5, the program's is 1"],
    ['producer-crash [--runs 5] [--fault kill]', "--fault: shows the default kill, the program's is none"],
    ['bench [--window 64,256]', "--window: shows the default 64,256, the program's is 256"],
    ['failover [--hold 30s]', '--hold: shows the default 30s'],
    ['compare [--fault kill|stop|pause|disconnect|none]', `--fault: the choices are ${[...FAULT_KINDS, 'none'].join('|')}`],
    ['compare [--confirms on|off|both]', '--confirms: shows the default on'],
    ['compare [--no-such 1]', '--no-such: no such option'],
    ['dlq-demo --strategy at-most-once|sometimes', '--strategy: sometimes not among'],
    ['cluster up [--timeout 180000]', '--timeout: shows the default 180000'],
  ])('rmq-bench %s', (line, problem) => {
    expect(synopsisProblems(line).join('\n')).toContain(problem);
  });

  it('takes a duration, a list and a default the description states', () => {
    expect(synopsisProblems('cluster up [--timeout 3m]')).toEqual([]);
    expect(synopsisProblems('consumer-crash [--modes autoack,manual,idempotent] [--work 2ms]')).toEqual([]);
    expect(synopsisProblems('dlq-demo --strategy both [--fault pause|kill] [--hold 15s] [-n 200]')).toEqual([]);
  });
});

describe('every command line the documents show parses', () => {
  it.each(examples.map((e) => ({ ...e, args: exampleArgs(e.rest) })))('$file:$line $args', async ({ args }) => {
    if (args[0]?.startsWith('-')) {
      // rmq-bench --version / --help: commander's own exit, 0.
      const { err } = await parse(args);
      expect(err).toBeInstanceOf(CommanderError);
      expect((err as CommanderError).exitCode).toBe(0);
    } else await invocationOf(args); // parses, and dispatches exactly one command
  });

  it('finds the synopses and the examples (not an empty table)', () => {
    expect(synopses.length).toBeGreaterThan(LEAVES.length);
    expect(examples.length).toBeGreaterThan(40);
    expect(shellCommands('x.md', '```sh\nVAR=1 npx rmq-bench compare \\\n  -n 5 # a comment\n```\n')).toEqual([
      { file: 'x.md', line: 2, rest: 'compare -n 5' },
    ]);
  });
});

/** The widest a line of a fenced block (a synopsis, a pasted output) may be: as wide as a report (text-wrap.ts), it reads without scrolling. */
const BLOCK_COLUMNS = TEXT_COLUMNS;

describe('fenced blocks at most 120 columns', () => {
  // docs/WORKSHOP.md too: its outputs are pasted from real runs, and the printers keep to the same
  // width (src/report/text-wrap.ts, test/unit/report-widths.test.ts).
  it.each([...DOCS, 'docs/WORKSHOP.md'])('%s', (file) => {
    const wide = mdLines(text(file))
      .filter((l) => l.fence !== null && [...l.text].length > BLOCK_COLUMNS)
      .map((l) => `${file}:${l.line}: ${[...l.text].length} columns`);
    expect(wide).toEqual([]);
  });
});

describe('README.md: a manual for users', () => {
  it('is under 400 lines', () => {
    expect(readme.split('\n').length).toBeLessThan(400);
  });

  it.each(DOCS)('%s has no commit hash outside code blocks, no date outside a table, no history', (file) => {
    const md = text(file);
    expect(hashesIn(md)).toEqual([]);
    expect(datesIn(md)).toEqual([]);
    expect(historyIn(md)).toEqual([]);
  });

  it('catches a hash and a date, and not a colour, a number or a word', () => {
    expect(hashesIn('fixed in 460b66b.\nand 74e285b3c1d2e4f5a6b7c8d9e0f1a2b3c4d5e6f7')).toEqual([
      'line 1: 460b66b',
      'line 2: 74e285b3c1d2e4f5a6b7c8d9e0f1a2b3c4d5e6f7',
    ]);
    expect(hashesIn('colour #1f2937aa, 2,653 tests, 1234567 ids, deadbeef, rabbit1, amq.ctag-1a2b3c4d\n```\n460b66b\n```')).toEqual([]);
    expect(datesIn('seen on 2025-01-31.\n| 2025-01-31 | a results table |\n```\n2025-01-31\n```')).toEqual(['line 1: 2025-01-31']);
  });

  it('lists every command in its table', () => {
    for (const [names] of LEAVES) expect(readme, names.join(' ')).toMatch(new RegExp(`^\\|[^\\n]*\\| \`${names.join(' ')}\` \\|`, 'm'));
  });

  it("has the variables rmq-bench reads in its Settings table, exactly, with loadConfig's defaults", () => {
    const rows = new Map([...readme.matchAll(/^\| `(RMQ_BENCH_[A-Z_]+)` \| ([^|]*) \|/gm)].map((m) => [m[1]!, m[2]!.trim()]));
    expect([...rows.keys()].sort()).toEqual(
      ENVIRONMENT.map(([n]) => n)
        .filter((n) => n.startsWith('RMQ_BENCH_'))
        .sort(),
    );
    const c = loadConfig({});
    const defaults: Record<string, string> = {
      RMQ_BENCH_NAME: c.clusterName,
      RMQ_BENCH_AMQP_PORT: String(c.nodes[0]!.amqpPort),
      RMQ_BENCH_MANAGEMENT_PORT: String(c.nodes[0]!.managementPort),
      RMQ_BENCH_PROMETHEUS_PORT: String(c.prometheusPort),
      RMQ_BENCH_USER: c.user,
      RMQ_BENCH_PASSWORD: c.password,
      RMQ_BENCH_IMAGE_SOURCE: c.imageSource,
      RMQ_BENCH_BUILT_IMAGE: c.builtImage,
      RMQ_BENCH_DEBIAN_SUITE: c.debianSuite,
      RMQ_BENCH_ERLANG_COOKIE: c.erlangCookie,
    };
    for (const [name, value] of Object.entries(defaults)) expect(rows.get(name), name).toBe(`\`${value}\``);
  });
});
