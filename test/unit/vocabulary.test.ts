import { type Command, CommanderError, type Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { createProgram } from '../../src/cli/program.js';
import { renameFlags } from '../../src/cli/renamed-flags.js';
import { captureOutput, leaves, parse } from './program-harness.js';

/**
 * One CLI vocabulary across every command, checked by walking the program commander builds:
 * durations with a unit, no unit in an option's name, -n/--count for message counts.
 */

const program = (): Command => createProgram(async () => undefined);

const everyOption = (): { words: string[]; option: Option }[] =>
  leaves(program()).flatMap(([words, command]) => command.options.map((option) => ({ words, option })));

const { stderr } = captureOutput();

const durationOptions = everyOption().filter(({ option }) => /<durations?>/.test(option.flags));

describe('durations: every time option takes a unit', () => {
  it('there are duration options to check (the walk found them)', () => {
    expect(durationOptions.length).toBeGreaterThan(40);
  });

  it.each(durationOptions.map(({ words, option }) => ({ name: `${words.join(' ')} ${option.long}`, words, long: option.long! })))(
    '$name 500 is refused with a hint',
    async ({ words, long }) => {
      const { calls, err } = await parse([...words, long, '500']);
      expect(calls).toEqual([]);
      expect(err).toBeInstanceOf(CommanderError);
      expect((err as CommanderError).code).toBe('commander.invalidArgument');
      expect(stderr.join('')).toContain("'500' has no unit: write 500ms or 500s");
    },
  );

  it('no option carries a unit in its name or takes milliseconds or seconds as a bare number', () => {
    const offenders = everyOption()
      .filter(({ option }) => /-(ms|s|sec|secs|seconds|millis)\b/.test(option.long ?? '') || /<(ms|s|seconds|millis)>/.test(option.flags))
      .map(({ words, option }) => `${words.join(' ')} ${option.flags}`);
    expect(offenders).toEqual([]);
  });
});

describe('message counts: -n/--count wherever a command publishes or processes N, --limit where it shows or replays N', () => {
  const counted = [
    'compare',
    'producer',
    'consumer',
    'consumer-crash',
    'prefetch-demo',
    'dlq-demo',
    'durability-demo',
    'delayed-retry-demo',
    'consumer-timeout-demo',
    'producer-crash',
    'bench',
  ];
  const byName = new Map(leaves(program()).map(([words, command]) => [words.join(' '), command]));

  it.each(counted)('%s takes -n, --count <n>', (name) => {
    const options = byName.get(name)?.options ?? [];
    expect(options.map((o) => o.flags)).toContain('-n, --count <n>');
  });

  it.each(['dlq inspect', 'dlq replay'])('%s takes --limit <n>, and no -n', (name) => {
    const flags = byName.get(name)?.options.map((o) => o.flags) ?? [];
    expect(flags).toContain('--limit <n>');
    expect(flags.filter((f) => /^-n\b|--count\b/.test(f))).toEqual([]);
  });

  it('no visible option spells a message count otherwise', () => {
    const visible = everyOption().filter(({ option }) => !option.hidden);
    expect(visible.filter(({ option }) => /--(messages|pmessages|msgs)\b/.test(option.flags)).map(({ option }) => option.flags)).toEqual([]);
  });

  it.each([
    { args: ['bench', '-C', '300'], same: ['bench', '-n', '300'] },
    { args: ['bench', '--pmessages', '300'], same: ['bench', '--count', '300'] },
    { args: ['dlq', 'replay', '-n', '5'], same: ['dlq', 'replay', '--limit', '5'] },
    { args: ['dlq', 'replay', '-n5'], same: ['dlq', 'replay', '--limit', '5'] },
    { args: ['dlq', 'inspect', '--count', '5'], same: ['dlq', 'inspect', '--limit', '5'] },
  ])('$args (the former spelling, hidden) is $same', async ({ args, same }) => {
    // The old dlq spellings are renamed before parsing (renamed-flags.ts), as main.ts does.
    const a = await parse(renameFlags(args).args);
    const b = await parse(same);
    expect(a.err).toBeUndefined();
    expect(a.calls).toEqual(b.calls);
    expect(a.calls).toHaveLength(1);
  });

  it.each([['bench', '-n', '300', '-C', '300']])('%s %s %s %s %s: both spellings at once are refused', async (...args) => {
    const { calls, err } = await parse(args);
    expect(calls).toEqual([]);
    expect((err as CommanderError).code).toBe('commander.conflictingOption');
  });
});
