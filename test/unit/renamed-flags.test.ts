import { describe, expect, it } from 'vitest';
import { createProgram } from '../../src/cli/program.js';
import { takeGlobalFlags } from '../../src/cli/global-flags.js';
import { RENAMED_FLAGS, renameFlags } from '../../src/cli/renamed-flags.js';

/** Renamed flags: the old spelling rewritten to the new, with one notice; nothing else touched. */
describe('renameFlags', () => {
  const cases: { name: string; args: string[]; expected: string[]; notices: string[] }[] = [
    {
      name: 'producer --report',
      args: ['producer', '-n', '5', '--report', 'run.json'],
      expected: ['producer', '-n', '5', '--ledger', 'run.json'],
      notices: ['rmq-bench: --report is now --ledger (the old name goes in a later release)'],
    },
    {
      name: 'verify --report=FILE',
      args: ['verify', '--report=run.json'],
      expected: ['verify', '--ledger=run.json'],
      notices: ['rmq-bench: --report is now --ledger (the old name goes in a later release)'],
    },
    {
      name: 'compare --mode, twice: one notice',
      args: ['compare', '--mode', 'on', '--mode', 'off'],
      expected: ['compare', '--confirms', 'on', '--confirms', 'off'],
      notices: ['rmq-bench: --mode is now --confirms (the old name goes in a later release)'],
    },
    { name: "bench's own --mode stays", args: ['bench', '--mode', 'async'], expected: ['bench', '--mode', 'async'], notices: [] },
    { name: 'the report command is not a flag', args: ['report', 'a.json', '-o', 'i.html'], expected: ['report', 'a.json', '-o', 'i.html'], notices: [] },
    { name: 'after --, nothing is rewritten', args: ['producer', '--', '--report'], expected: ['producer', '--', '--report'], notices: [] },
    { name: 'an option before the command', args: ['--help'], expected: ['--help'], notices: [] },
    { name: 'no command', args: [], expected: [], notices: [] },
  ];
  it.each(cases)('$name', ({ args, expected, notices }) => {
    expect(renameFlags(args)).toEqual({ args: expected, notices });
  });

  it('every new name is an option of its command, and no old name is one any more', () => {
    const program = createProgram(async () => undefined);
    for (const [command, table] of Object.entries(RENAMED_FLAGS)) {
      const c = program.commands.find((x) => x.name() === command)!;
      const flags = c.options.map((o) => o.long);
      for (const [old, renamed] of Object.entries(table)) {
        expect(flags, `${command} ${renamed}`).toContain(renamed);
        expect(flags, `${command} ${old}`).not.toContain(old);
      }
    }
  });
});

describe('takeGlobalFlags: --quiet and --no-color anywhere before --, as their variables', () => {
  const cases: { args: string[]; expected: string[]; env: Record<string, string> }[] = [
    { args: ['compare', '--quiet', '-n', '10'], expected: ['compare', '-n', '10'], env: { RMQ_BENCH_QUIET: '1' } },
    { args: ['--no-color', 'audit', '--quiet'], expected: ['audit'], env: { NO_COLOR: '1', RMQ_BENCH_QUIET: '1' } },
    { args: ['producer', '--', '--quiet'], expected: ['producer', '--', '--quiet'], env: {} },
    { args: ['audit', '--all'], expected: ['audit', '--all'], env: {} },
  ];
  it.each(cases)('$args', ({ args, expected, env }) => {
    expect(takeGlobalFlags(args)).toEqual({ args: expected, env });
  });
});
