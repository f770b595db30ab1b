import { type Command, CommanderError, type Option } from 'commander';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createProgram, type Invocation } from '../../src/cli/program.js';

/**
 * One CLI vocabulary across every command, checked by walking the program commander builds:
 * durations with a unit, no unit in an option's name, -n/--count for message counts.
 */

const program = (): Command => createProgram(async () => undefined);

/** Every runnable command as [its argv words, the command]. */
function leaves(c: Command, prefix: string[] = []): [string[], Command][] {
  return c.commands.flatMap((sub) => {
    const words = [...prefix, sub.name()];
    return sub.commands.length > 0 ? leaves(sub, words) : [[words, sub] as [string[], Command]];
  });
}

const everyOption = (): { words: string[]; option: Option }[] =>
  leaves(program()).flatMap(([words, command]) => command.options.map((option) => ({ words, option })));

let stderr: string[];
beforeEach(() => {
  stderr = [];
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => stderr.push(String(chunk)) > 0);
  vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
});
afterEach(() => {
  vi.restoreAllMocks();
});

async function parse(args: string[]): Promise<{ calls: Invocation[]; err: unknown }> {
  const calls: Invocation[] = [];
  const err = await createProgram(async (i) => void calls.push(i))
    .parseAsync(['node', 'rmq-bench', ...args])
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  return { calls, err };
}

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
