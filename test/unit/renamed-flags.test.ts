import type { Command } from 'commander';
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
    {
      name: "bench's --mode is --confirm-mode, per command",
      args: ['bench', '--mode', 'async', '-z', '5s'],
      expected: ['bench', '--confirm-mode', 'async', '-z', '5s'],
      notices: ['rmq-bench: --mode is now --confirm-mode (the old name goes in a later release)'],
    },
    {
      name: 'bench --time: two notices for two flags',
      args: ['bench', '--time=5s', '--mode', 'sync'],
      expected: ['bench', '--duration=5s', '--confirm-mode', 'sync'],
      notices: [
        'rmq-bench: --time is now --duration (the old name goes in a later release)',
        'rmq-bench: --mode is now --confirm-mode (the old name goes in a later release)',
      ],
    },
    {
      name: 'report -o: a short flag',
      args: ['report', 'a.json', '-o', 'i.html'],
      expected: ['report', 'a.json', '--html', 'i.html'],
      notices: ['rmq-bench: -o is now --html (the old name goes in a later release)'],
    },
    {
      name: 'dlq inspect -n20: a nested command, the value attached',
      args: ['dlq', 'inspect', '-n20', '--json'],
      expected: ['dlq', 'inspect', '--limit', '20', '--json'],
      notices: ['rmq-bench: -n is now --limit (the old name goes in a later release)'],
    },
    {
      name: 'dlq replay --count',
      args: ['--quiet', 'dlq', 'replay', '--count', '5'],
      expected: ['--quiet', 'dlq', 'replay', '--limit', '5'],
      notices: ['rmq-bench: --count is now --limit (the old name goes in a later release)'],
    },
    { name: "producer's -n stays (a count, not a limit)", args: ['producer', '-n', '5'], expected: ['producer', '-n', '5'], notices: [] },
    { name: 'a short flag that is not renamed, with its value attached', args: ['dlq', 'inspect', '-x5'], expected: ['dlq', 'inspect', '-x5'], notices: [] },
    {
      name: "cluster up's --timeout stays (a deadline)",
      args: ['cluster', 'up', '--timeout', '3m'],
      expected: ['cluster', 'up', '--timeout', '3m'],
      notices: [],
    },
    {
      name: 'consumer-timeout-demo --timeout: the value under test',
      args: ['consumer-timeout-demo', '--timeout', '5s'],
      expected: ['consumer-timeout-demo', '--consumer-timeout', '5s'],
      notices: ['rmq-bench: --timeout is now --consumer-timeout (the old name goes in a later release)'],
    },
    {
      name: 'audit --management-url',
      args: ['audit', '--management-url=http://h:15672'],
      expected: ['audit', '--management-urls=http://h:15672'],
      notices: ['rmq-bench: --management-url is now --management-urls (the old name goes in a later release)'],
    },
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
      const c = command.split(' ').reduce<Command>((parent, name) => parent.commands.find((x) => x.name() === name)!, program);
      const flags = c.options.flatMap((o) => [o.long, o.short]);
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
