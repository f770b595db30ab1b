import type { Command, Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { createProgram } from '../../src/cli/program.js';
import { RENAMED_FLAGS } from '../../src/cli/renamed-flags.js';
import { type Concept, DISTINCT_PLURALS, VOCABULARY } from '../../src/cli/vocabulary.js';

/**
 * One name per concept: every option of every command, read from the program, against
 * src/cli/vocabulary.ts and src/cli/renamed-flags.ts. It fails on a concept under two names (a
 * synonym declared, a flag next to its plural, a short letter for two flags), on one name with
 * two value names, and on an old spelling declared again.
 */

interface Declared {
  /** 'dlq inspect'. */
  readonly command: string;
  readonly option: Option;
  /** '<duration>', '[bool]', or '' for a switch. */
  readonly value: string;
}

const commandName = (c: Command): string => {
  const names: string[] = [];
  for (let x: Command | null = c; x?.parent; x = x.parent) names.unshift(x.name());
  return names.join(' ');
};

/** Every option of every command (the root's global flags too), hidden ones included. */
function declaredOptions(program: Command): Declared[] {
  const every = (c: Command): Command[] => [c, ...c.commands.flatMap(every)];
  return every(program).flatMap((c) =>
    c.options.map((option) => ({ command: commandName(c) || 'rmq-bench', option, value: /[<[][^>\]]*[>\]]/.exec(option.flags)?.[0] ?? '' })),
  );
}

const names = (o: Option): string[] => [o.long, o.short].filter((n): n is string => n !== undefined);

/** What is wrong with the options against the vocabulary: one line each, empty when nothing is. */
function vocabularyProblems(declared: readonly Declared[], vocabulary: Readonly<Record<string, Concept>>): string[] {
  const problems: string[] = [];
  const visible = declared.filter((d) => !d.option.hidden && d.option.long !== undefined);
  // A concept under another name.
  for (const [concept, c] of Object.entries(vocabulary)) {
    for (const d of declared) {
      const synonym = names(d.option).find((n) => c.synonyms.includes(n));
      if (synonym) problems.push(`${d.command} ${synonym}: ${concept} is ${c.flag}`);
      if (d.option.long !== c.flag) continue;
      if (d.value !== c.value && d.value !== c.sweep)
        problems.push(`${d.command} ${c.flag} ${d.value}: ${concept} takes ${c.value}${c.sweep ? ` (or ${c.sweep})` : ''}`);
      if (d.option.short !== undefined && d.option.short !== c.short)
        problems.push(`${d.command} ${d.option.short}: ${c.flag}'s short flag is ${c.short ?? 'none'}`);
      if (c.means && !c.means.test(d.option.description)) problems.push(`${d.command} ${c.flag} means '${d.option.description}', not ${c.means}`);
    }
  }
  // One short letter, one flag.
  const shortOf = new Map<string, Set<string>>();
  for (const d of declared) if (d.option.short && d.option.long) shortOf.set(d.option.short, (shortOf.get(d.option.short) ?? new Set()).add(d.option.long));
  for (const [short, longs] of shortOf) if (longs.size > 1) problems.push(`${short} is ${[...longs].join(' and ')}`);
  const shortConcept = new Map(Object.values(vocabulary).flatMap((c) => (c.short ? [[c.short, c.flag] as const] : [])));
  for (const [short, longs] of shortOf) {
    const flag = shortConcept.get(short);
    if (flag !== undefined && !longs.has(flag)) problems.push(`${short} is ${[...longs].join(' and ')}, where the vocabulary has ${flag}`);
  }
  // One flag, one value name (a sweep of the concept's value aside).
  const valuesOf = new Map<string, Set<string>>();
  for (const d of visible) valuesOf.set(d.option.long!, (valuesOf.get(d.option.long!) ?? new Set()).add(d.value));
  const sweeps = new Map(Object.values(vocabulary).flatMap((c) => (c.sweep ? [[c.flag, c.sweep] as const] : [])));
  for (const [flag, values] of valuesOf) {
    const own = [...values].filter((v) => v !== sweeps.get(flag));
    if (own.length > 1) problems.push(`${flag} takes ${own.join(' and ')}`);
  }
  // A flag next to its plural.
  const flags = new Set(visible.map((d) => d.option.long!));
  for (const flag of flags) {
    const plural = `${flag}s`;
    if (flags.has(plural) && !DISTINCT_PLURALS.some(([a, b]) => a === flag && b === plural)) problems.push(`${flag} and ${plural}: one concept, two names`);
  }
  return problems;
}

const program = createProgram(async () => undefined);
const DECLARED = declaredOptions(program);

describe('one name per concept, across every command', () => {
  it('reads every command (the walk works)', () => {
    expect(new Set(DECLARED.map((d) => d.command)).size).toBeGreaterThan(25);
    expect(DECLARED.length).toBeGreaterThan(300);
  });

  it('the program has none of the problems', () => {
    expect(vocabularyProblems(DECLARED, VOCABULARY)).toEqual([]);
  });

  it.each(Object.entries(VOCABULARY))('%s: its flag is an option of some command, with its value name', (_, c) => {
    expect(DECLARED.some((d) => d.option.long === c.flag && d.value === c.value)).toBe(true);
  });

  it('no name is two concepts in the table, and no concept is its own synonym', () => {
    const all = Object.values(VOCABULARY).flatMap((c) => [c.flag, ...c.synonyms]);
    expect(all.filter((n, i) => all.indexOf(n) !== i)).toEqual([]);
  });

  it("every plural pair allowed is declared (the list doesn't rot)", () => {
    for (const [one, many] of DISTINCT_PLURALS) {
      expect(DECLARED.some((d) => d.option.long === one)).toBe(true);
      expect(DECLARED.some((d) => d.option.long === many)).toBe(true);
    }
  });
});

describe('renamed flags: the new name declared, the old one not, anywhere the table says', () => {
  it('every old spelling is in the vocabulary: a synonym no command declares, or the flag of another concept', () => {
    const known = new Set(Object.values(VOCABULARY).flatMap((c: Concept) => [c.flag, ...(c.short ? [c.short] : []), ...c.synonyms]));
    const olds = Object.values(RENAMED_FLAGS).flatMap((table) => Object.keys(table));
    expect(olds.filter((old) => !known.has(old))).toEqual([]);
  });

  const byCommand = new Map<string, Declared[]>();
  for (const d of DECLARED) byCommand.set(d.command, [...(byCommand.get(d.command) ?? []), d]);
  it.each(Object.entries(RENAMED_FLAGS).flatMap(([command, table]) => Object.entries(table).map(([old, renamed]) => ({ command, old, renamed }))))(
    '$command $old -> $renamed',
    ({ command, old, renamed }) => {
      const own = (byCommand.get(command) ?? []).flatMap((d) => names(d.option));
      expect(own, `${command} has no option ${renamed}`).toContain(renamed);
      expect(own, `${command} still declares ${old}`).not.toContain(old);
    },
  );
});

describe('the check fails on one concept under two names', () => {
  const option = (flags: string, description = 'x', hidden = false): Option =>
    ({ flags, long: /--[\w-]+/.exec(flags)?.[0], short: /^-\w\b/.exec(flags)?.[0], description, hidden }) as Option;
  const d = (command: string, flags: string, description?: string): Declared => ({
    command,
    option: option(flags, description),
    value: /[<[][^>\]]*[>\]]/.exec(flags)?.[0] ?? '',
  });
  const fine = [d('bench', '-z, --duration <duration>'), d('chaos', '--duration <duration>'), d('bench', '--window <list>'), d('producer', '--window <n>')];

  it.each([
    ['a synonym declared again', d('chaos', '--time <duration>'), 'chaos --time: duration is --duration'],
    ['a renamed one declared again', d('failover', '--restore-after <duration>'), 'failover --restore-after: hold is --hold'],
    ['one flag, two value names', d('verify', '--duration <seconds>'), 'verify --duration <seconds>: duration takes <duration>'],
    ['a flag next to its plural', d('chaos', '--durations <list>'), '--duration and --durations'],
    ['--mode next to --modes', d('bench', '--modes <list>'), ''],
    ['a short letter for another flag', d('bench', '-z, --sleep <duration>'), '-z is --duration and --sleep'],
    ['a homonym: --timeout as a value under test', d('demo', '--timeout <duration>', 'the consumer timeout set on the queues'), '--timeout means'],
    ['a homonym: -n as show N', d('dlq inspect', '-n, --count <n>', 'show at most N messages'), '--count means'],
  ])('%s', (_, extra, said) => {
    expect(vocabularyProblems(fine, VOCABULARY)).toEqual([]);
    const withMode = said === '' ? [...fine, d('bench', '--mode <list>')] : fine;
    const problems = vocabularyProblems([...withMode, extra], VOCABULARY).join('\n');
    expect(problems).not.toBe('');
    expect(problems).toContain(said);
  });
});
