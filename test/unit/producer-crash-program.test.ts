import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import type { ProducerCliOptions } from '../../src/cli/commands/producer.js';
import { UsageError } from '../../src/errors.js';
import { PRODUCER_CRASH_CLI_DEFAULTS } from './fixtures/producer-crash.js';
import { captureOutput, parse } from './program-harness.js';

/** argv → invocation for producer --outbox, the producer's hidden harness options and producer-crash. */

const { stderr, stdout } = captureOutput();

describe('producer-crash: argv → options', () => {
  it.each([
    { args: [], expected: {} },
    { args: ['-n', '500', '--kills', '5', '--runs', '3', '--json'], expected: { count: 500, kills: 5, runs: 3, json: true } },
    { args: ['--modes', 'outbox'], expected: { modes: ['outbox'] } },
    { args: ['--modes', 'outbox,naive,outbox'], expected: { modes: ['outbox', 'naive'] } },
    { args: ['--seed', '0', '--fault', 'kill'], expected: { seed: 0, fault: 'kill' } },
    { args: ['--seed', '4294967295'], expected: { seed: 4_294_967_295 } },
    { args: ['-r', '800', '--print-every', '50'], expected: { ratePerSec: 800, printEvery: 50 } },
    { args: ['--html', '/tmp/producer-crash.html'], expected: { html: '/tmp/producer-crash.html' } },
  ])('$args', async ({ args, expected }) => {
    const { calls, err } = await parse(['producer-crash', ...args]);
    expect(err).toBeUndefined();
    expect(calls).toStrictEqual([{ command: 'producer-crash', options: { ...PRODUCER_CRASH_CLI_DEFAULTS, ...expected } }]);
  });

  it.each([
    { args: ['--modes', 'naive,clever'], text: "'clever' is not one of naive, outbox" },
    { args: ['--kills', '0'], text: "'0' is not a positive whole number" },
    { args: ['--seed', '-3'], text: "'-3' is not a whole number >= 0" },
    { args: ['--seed', '4294967296'], text: 'is above 4294967295' },
    { args: ['--fault', 'nuke'], text: 'nuke' },
  ])('$args: a commander usage error', async ({ args, text }) => {
    const { calls, err } = await parse(['producer-crash', ...args]);
    expect(err).toBeInstanceOf(CommanderError);
    expect(calls).toEqual([]);
    expect(stderr.join('')).toContain(text);
  });

  it.each([
    { args: ['--kills', '51'], text: '--kills 51 is more than 50' },
    { args: ['-n', '10', '--kills', '20'], text: '--kills 20 does not fit in -n 10: at most 9 distinct kill points' },
  ])('$args: a UsageError (exit 2)', async ({ args, text }) => {
    const { calls, err } = await parse(['producer-crash', ...args]);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toBe(text);
    expect(calls).toEqual([]);
  });
});

describe('producer --outbox and the hidden harness options', () => {
  const producerOf = async (args: string[]): Promise<ProducerCliOptions> => {
    const { calls, err } = await parse(['producer', ...args]);
    expect(err).toBeUndefined();
    return (calls[0] as { options: ProducerCliOptions }).options;
  };

  it('without them, neither key is present', async () => {
    const o = await producerOf([]);
    expect('outboxFile' in o).toBe(false);
    expect('harness' in o).toBe(false);
  });

  it('--outbox <file>', async () => {
    expect((await producerOf(['--outbox', '/tmp/o.sqlite'])).outboxFile).toBe('/tmp/o.sqlite');
  });

  it('the harness: run id, start, `sent` every N, `at` lines', async () => {
    expect((await producerOf(['--run-id', 'rabc12', '--start-at', '400', '--print-sent', '100', '--progress-lines', '-n', '1000'])).harness).toEqual({
      runId: 'rabc12',
      startAt: 400,
      printSentEvery: 100,
      progressLines: true,
    });
    expect((await producerOf(['--progress-lines'])).harness).toEqual({ runId: undefined, startAt: 0, printSentEvery: undefined, progressLines: true });
  });

  it('hidden from --help', async () => {
    await parse(['producer', '--help']);
    const help = stdout.join('');
    expect(help).toContain('--outbox <file>');
    expect(help).not.toContain('--start-at');
    expect(help).not.toContain('--progress-lines');
  });

  it.each([
    { args: ['--outbox', 'o.sqlite', '--tx'], text: '--outbox publishes with async confirms' },
    { args: ['--outbox', 'o.sqlite', '--confirms=false'], text: '--outbox publishes with async confirms' },
    { args: ['--outbox', 'o.sqlite', '--confirm-mode', 'sync'], text: '--outbox publishes with async confirms' },
    { args: ['--outbox', 'o.sqlite', '--ledger', 'r.json'], text: '--ledger is not supported' },
    { args: ['--outbox', 'o.sqlite', '--mandatory'], text: '--outbox does not handle basic.return' },
    { args: ['--outbox', 'o.sqlite', '--start-at', '3'], text: '--start-at does not apply' },
    { args: ['-n', '10', '--start-at', '10'], text: '--start-at 10 is not below -n 10' },
  ])('$args: a UsageError', async ({ args, text }) => {
    const { calls, err } = await parse(['producer', ...args]);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toContain(text);
    expect(calls).toEqual([]);
  });

  it('--run-id must be letters and digits (message ids split at the last dash)', async () => {
    const { err } = await parse(['producer', '--run-id', 'a-b']);
    expect(err).toBeInstanceOf(CommanderError);
    expect(stderr.join('')).toContain("'a-b' is not a run id");
  });
});
