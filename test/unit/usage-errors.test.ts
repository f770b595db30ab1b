import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.js';

/**
 * Usage errors end-to-end through main(): argv in, one line on stderr, nothing on stdout, the
 * exit code. None of these may reach a command's run (which would load the config and talk to
 * a broker): loadConfig is replaced by one that fails the test. The cases that used to spawn
 * the binary in the integration suite (compare-extra, delayed-retry-demo, outbox, retry-demo)
 * are here, with the same messages and exit codes.
 */
vi.mock('../../src/config.js', async (importOriginal) => ({
  ...(await importOriginal<typeof import('../../src/config.js')>()),
  loadConfig: () => {
    throw new Error('a usage error reached the command');
  },
}));

let stderr: string[];
let stdout: string[];
let exitCodeBefore: typeof process.exitCode;
beforeEach(() => {
  stderr = [];
  stdout = [];
  exitCodeBefore = process.exitCode;
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => stderr.push(String(chunk)) > 0);
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => stdout.push(String(chunk)) > 0);
});
afterEach(() => {
  vi.restoreAllMocks();
  process.exitCode = exitCodeBefore;
});

async function runMain(args: string[]): Promise<{ exitCode: number; stderr: string; stdout: string }> {
  process.exitCode = undefined;
  await main(['node', 'rmq-bench', ...args]);
  const code = process.exitCode as number | undefined;
  return { exitCode: code ?? 0, stderr: stderr.join(''), stdout: stdout.join('') };
}

const outbox = path.join(os.tmpdir(), 'rmq-bench-usage-errors.sqlite');

describe('usage errors through main(): one line on stderr, exit 2, nothing on stdout', () => {
  const cases: { args: string[]; line: string }[] = [
    // Network-fault flags with a fault that takes none.
    { args: ['compare', '--fault', 'kill', '--latency', '200ms'], line: "rmq-bench: --latency goes with --fault latency (not 'kill')" },
    { args: ['failover', '--fault', 'partition', '--loss', '5%'], line: "rmq-bench: --loss goes with --fault latency (not 'partition')" },
    {
      args: ['failover', '--fault', 'latency', '--loss', '120%'],
      line: "error: option '--loss <percent>' argument '120%' is invalid. '120%' is not a percentage between 0 and 100 (e.g. 5%)",
    },
    // Moved from test/integration/compare-extra.test.ts.
    { args: ['compare', '--restore-cmd', 'true'], line: 'rmq-bench: --restore-cmd needs --fault-cmd' },
    // Moved from test/integration/delayed-retry-demo.test.ts.
    { args: ['delayed-retry-demo', '--min', '5s', '--max', '2s'], line: 'rmq-bench: --max 2s is below --min 5s' },
    // Moved from test/integration/outbox.test.ts.
    {
      args: ['producer', '--outbox', outbox, '--tx'],
      line: 'rmq-bench: --outbox publishes with async confirms: it cannot be combined with --tx, --confirms=false or --confirm-mode',
    },
    // Moved from test/integration/retry-demo.test.ts.
    { args: ['retry-demo', '--time-scale', '0.1'], line: 'rmq-bench: --time-scale needs --backoff' },
    {
      args: ['retry-demo', '--backoff', '1s', '--failures', '2'],
      line: 'rmq-bench: --failures 2 is more than the 1 rungs of --backoff: the message would end in demo.dlq (the poison message already shows that)',
    },
    // The other option combinations each command checks before it runs.
    { args: ['compare', '--fault-cmd', 'true', '--fault', 'none'], line: 'rmq-bench: --fault-cmd with --fault none applies nothing' },
    { args: ['consumer', '--nack', '--autoack'], line: 'rmq-bench: --nack needs manual ack: with --autoack the broker has already forgotten the message' },
    { args: ['consumer', '--fail-every', '2'], line: 'rmq-bench: --fail-every, --fail-rate and --fail-first need --on-failure' },
    { args: ['delayed-retry-demo', '--min', '0'], line: "error: option '--min <duration>' argument '0' is invalid. '0' is not a duration above zero" },
    { args: ['watch', '--json'], line: 'rmq-bench: --json needs --once (one snapshot, one JSON document)' },
    { args: ['bench', '--mode', 'none', '--window', '64'], line: 'rmq-bench: --window applies to async confirms: add async to --mode' },
    { args: ['producer-crash', '--kills', '51'], line: 'rmq-bench: --kills 51 is more than 50' },
    { args: ['producer', '-n', '10', '--start-at', '10'], line: 'rmq-bench: --start-at 10 is not below -n 10' },
    {
      args: ['alarm-demo', '--hold', '2s', '--deadline', '3s'],
      line: 'rmq-bench: --deadline 3s is not shorter than --hold 2s: the deadline publisher would never give up',
    },
    { args: ['alarm-demo', '--alarm', 'cpu'], line: "error: option '--alarm <kind>' argument 'cpu' is invalid. Allowed choices are memory, disk." },
    {
      args: ['producer', '--blocked-timeout', 'soon'],
      line: expect.stringMatching(/^error: option '--blocked-timeout <duration>' argument 'soon' is invalid\./) as unknown as string,
    },
    // commander's own messages (it prints them; main maps them to 2).
    { args: ['frobnicate'], line: "error: unknown command 'frobnicate'" },
    { args: ['verify'], line: "error: required option '--report <file>' not specified" },
    {
      args: ['failover', '--fault', 'nuke'],
      line: "error: option '--fault <kind>' argument 'nuke' is invalid. Allowed choices are kill, stop, pause, disconnect, partition, latency, quorum-loss.",
    },
    { args: ['dlq', 'replay', '--limit', '0'], line: "error: option '--limit <n>' argument '0' is invalid. '0' is not a positive whole number" },
    { args: ['report', '-o', 'index.html'], line: "error: missing required argument 'files-or-folders'" },
    { args: ['report', 'smoke-results'], line: "error: required option '-o, --output <file>' not specified" },
    {
      args: ['report', 'smoke-results', '-o', '/no/such/dir/index.html'],
      line: "error: option '-o, --output <file>' argument '/no/such/dir/index.html' is invalid. cannot write '/no/such/dir/index.html': directory '/no/such/dir' does not exist or is not writable",
    },
    {
      args: ['producer', '--report', '/nonexistent/dir/run.json'],
      line: "error: option '--report <file>' argument '/nonexistent/dir/run.json' is invalid. cannot write '/nonexistent/dir/run.json': directory '/nonexistent/dir' does not exist or is not writable",
    },
    { args: ['report', 'a.json', 'b.json', '-o', './b.json'], line: 'rmq-bench: the output ./b.json is also one of the inputs' },
    {
      args: ['producer', '--urls', 'http://u:secret@h'],
      line: "error: option '--urls <list>' argument 'http://u:***@h' is invalid. the URL is not an amqp:// or amqps:// URL",
    },
  ];

  it.each(cases)('$args', async ({ args, line }) => {
    const r = await runMain(args);
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([line]);
    expect(r.stdout).toBe('');
  });
});

describe('contradicting combinations: refused with one line, exit 2, never silently resolved', () => {
  const cases: { args: string[]; line: string }[] = [
    {
      args: ['producer', '--confirms=false', '--confirm-mode', 'sync'],
      line: 'rmq-bench: --confirm-mode does nothing with --confirms=false (no confirms to wait for)',
    },
    { args: ['producer', '--no-confirms', '--window', '8'], line: 'rmq-bench: --window does nothing with --confirms=false (no confirms to wait for)' },
    {
      args: ['producer', '--confirms=false', '--confirm-timeout', '1s'],
      line: 'rmq-bench: --confirm-timeout does nothing with --confirms=false (no confirms to wait for)',
    },
    { args: ['producer', '--tx', '--confirm-mode', 'batch'], line: 'rmq-bench: --confirm-mode does nothing with --tx (AMQP transactions instead of confirms)' },
    { args: ['producer', '--tx', '--confirms'], line: 'rmq-bench: --confirms does nothing with --tx (AMQP transactions instead of confirms)' },
    { args: ['producer', '--tx', '--window', '8'], line: 'rmq-bench: --window does nothing with --tx (AMQP transactions instead of confirms)' },
    { args: ['producer', '--confirm-mode', 'sync', '--window', '8'], line: 'rmq-bench: --window is for --confirm-mode async, not sync' },
    { args: ['producer', '--batch-size', '10'], line: 'rmq-bench: --batch-size is for --confirm-mode batch and --tx, not --confirm-mode async' },
    {
      args: ['failover', '--election-timeout', '0'],
      line: "error: option '--election-timeout <duration>' argument '0' is invalid. '0' is not a duration above zero",
    },
    {
      args: ['failover', '--no-restore', '--rejoin-timeout', '1m'],
      line: 'rmq-bench: --rejoin-timeout does nothing with --no-restore (the node is left faulted)',
    },
    { args: ['compare', '--fault', 'none', '--fault-at', '0.5'], line: 'rmq-bench: --fault-at does nothing with --fault none' },
    { args: ['compare', '--fault', 'none', '--restore-after', '5s'], line: 'rmq-bench: --restore-after does nothing with --fault none' },
    { args: ['compare', '--mode', 'off', '--window', '64'], line: 'rmq-bench: --window does nothing with --mode off (confirms off only)' },
    {
      args: ['consumer', '--autoack', '--prefetch', '5'],
      line: 'rmq-bench: --prefetch does nothing with --autoack (no acks: the broker does not wait for them)',
    },
    {
      args: ['consumer', '--autoack', '--multi-ack-every', '5'],
      line: 'rmq-bench: --multi-ack-every does nothing with --autoack (no acks: the broker does not wait for them)',
    },
    {
      args: ['consumer', '--nack', '--prefetch', '5'],
      line: 'rmq-bench: --prefetch does nothing with --nack (it closes the connection at the first delivery, with prefetch 1)',
    },
    {
      args: ['consumer-crash', '--modes', 'autoack', '--prefetch', '5'],
      line: 'rmq-bench: --prefetch is for the manual ack modes, which --modes autoack leaves out',
    },
    { args: ['producer-crash', '--modes', 'outbox', '--print-every', '10'], line: 'rmq-bench: --print-every is for the naive mode, which --modes leaves out' },
    { args: ['watch', '--once', '--interval', '2s'], line: 'rmq-bench: --interval does nothing with --once (one snapshot, no refresh)' },
    { args: ['cluster', 'up', '--timeout', '0'], line: "error: option '--timeout <duration>' argument '0' is invalid. '0' is not a duration above zero" },
  ];

  it.each(cases)('$args', async ({ args, line }) => {
    const r = await runMain(args);
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([line]);
    expect(r.stdout).toBe('');
  });
});

describe('help and version through main(): stdout, exit 0', () => {
  it.each([[['--help']], [['producer', '--help']], [['help', 'cluster']], [['--version']]])('%j', async (args) => {
    const r = await runMain(args);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).not.toBe('');
    expect(r.stderr).toBe('');
  });
});
