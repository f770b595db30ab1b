import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.js';
import { FAULT_KINDS } from '../../src/faults/kinds.js';
import { SCHEMA_VERSION } from '../../src/schema-version.js';
import { captureOutput } from './program-harness.js';

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

const { stderr, stdout } = captureOutput();
let exitCodeBefore: typeof process.exitCode;
beforeEach(() => {
  exitCodeBefore = process.exitCode;
});
afterEach(() => {
  process.exitCode = exitCodeBefore;
});

async function runMain(args: string[]): Promise<{ exitCode: number; stderr: string; stdout: string }> {
  process.exitCode = undefined;
  await main(['node', 'rmq-bench', ...args]);
  const code = process.exitCode as number | undefined;
  return { exitCode: code ?? 0, stderr: stderr.join(''), stdout: stdout.join('') };
}

/** A usage error: exit 2, the one line on stderr, nothing on stdout (with --json: the error document, saying what the line says). */
async function refusedWithOneLine({ args, line }: { args: string[]; line: string }): Promise<void> {
  const r = await runMain(args);
  expect(r.exitCode).toBe(2);
  expect(r.stderr.trim().split('\n')).toEqual([line]);
  if (!args.includes('--json')) {
    expect(r.stdout).toBe('');
    return;
  }
  const doc = JSON.parse(r.stdout) as { kind: string; schemaVersion: number; exitCode: number; message: string; hint: string | null };
  expect(doc).toMatchObject({ kind: 'error', schemaVersion: SCHEMA_VERSION, exitCode: 2 });
  expect(`rmq-bench: ${doc.message} (${doc.hint})`).toBe(line);
}

const outbox = path.join(os.tmpdir(), 'rmq-bench-usage-errors.sqlite');

describe('usage errors through main(): one line on stderr, exit 2, nothing on stdout', () => {
  const cases: { args: string[]; line: string }[] = [
    // Network-fault flags with a fault that takes none.
    {
      args: ['compare', '--fault', 'kill', '--latency', '200ms'],
      line: "rmq-bench: --latency goes with --fault latency (not 'kill') (run rmq-bench compare --help)",
    },
    {
      args: ['failover', '--fault', 'partition', '--loss', '5%'],
      line: "rmq-bench: --loss goes with --fault latency (not 'partition') (run rmq-bench failover --help)",
    },
    {
      args: ['failover', '--fault', 'latency', '--loss', '120%'],
      line: "rmq-bench: --loss: '120%' is not a percentage between 0 and 100 (e.g. 5%) (run rmq-bench failover --help)",
    },
    // A fault about a quorum queue's members on another queue type.
    {
      args: ['compare', '--queue-type', 'mirrored', '--fault', 'quorum-loss'],
      line: 'rmq-bench: --fault quorum-loss is about the members of a quorum queue or a stream; it is not applied to a mirrored queue (use kill, stop, pause, disconnect or a partition) (run rmq-bench compare --help)',
    },
    // Changing a cluster's version, size or partition handling in place.
    {
      args: ['cluster', 'reset', '--rabbitmq', '4.0'],
      line: 'rmq-bench: --rabbitmq needs --hard: a cluster is not changed to another version in place (run rmq-bench cluster reset --help)',
    },
    // Moved from test/integration/compare-extra.test.ts.
    { args: ['compare', '--restore-cmd', 'true'], line: 'rmq-bench: --restore-cmd needs --fault-cmd (run rmq-bench compare --help)' },
    // Moved from test/integration/delayed-retry-demo.test.ts.
    { args: ['delayed-retry-demo', '--min', '5s', '--max', '2s'], line: 'rmq-bench: --max 2s is below --min 5s (run rmq-bench delayed-retry-demo --help)' },
    // Moved from test/integration/outbox.test.ts.
    {
      args: ['producer', '--outbox', outbox, '--tx'],
      line: 'rmq-bench: --outbox publishes with async confirms: it cannot be combined with --tx, --confirms=false or --confirm-mode (run rmq-bench producer --help)',
    },
    // Moved from test/integration/retry-demo.test.ts.
    { args: ['retry-demo', '--time-scale', '0.1'], line: 'rmq-bench: --time-scale needs --backoff (run rmq-bench retry-demo --help)' },
    {
      args: ['retry-demo', '--backoff', '1s', '--failures', '2'],
      line: 'rmq-bench: --failures 2 is more than the 1 rungs of --backoff: the message would end in demo.dlq (the poison message already shows that) (run rmq-bench retry-demo --help)',
    },
    // The other option combinations each command checks before it runs.
    {
      args: ['compare', '--fault-cmd', 'true', '--fault', 'none'],
      line: 'rmq-bench: --fault-cmd with --fault none applies nothing (run rmq-bench compare --help)',
    },
    {
      args: ['consumer', '--nack', '--autoack'],
      line: 'rmq-bench: --nack needs manual ack: with --autoack the broker has already forgotten the message (run rmq-bench consumer --help)',
    },
    {
      args: ['consumer', '--fail-every', '2'],
      line: 'rmq-bench: --fail-every, --fail-rate and --fail-first need --on-failure (run rmq-bench consumer --help)',
    },
    { args: ['delayed-retry-demo', '--min', '0'], line: "rmq-bench: --min: '0' is not a duration above zero (run rmq-bench delayed-retry-demo --help)" },
    { args: ['watch', '--json'], line: 'rmq-bench: --json needs --once (one snapshot, one JSON document) (run rmq-bench watch --help)' },
    {
      args: ['bench', '--confirm-mode', 'none', '--window', '64'],
      line: 'rmq-bench: --window applies to async confirms: add async to --confirm-mode (run rmq-bench bench --help)',
    },
    { args: ['producer-crash', '--kills', '51'], line: 'rmq-bench: --kills 51 is more than 50 (run rmq-bench producer-crash --help)' },
    { args: ['producer', '-n', '10', '--start-at', '10'], line: 'rmq-bench: --start-at 10 is not below -n 10 (run rmq-bench producer --help)' },
    {
      args: ['alarm-demo', '--hold', '2s', '--blocked-timeout', '3s'],
      line: 'rmq-bench: --blocked-timeout 3s is not shorter than --hold 2s: the deadline publisher would never give up (run rmq-bench alarm-demo --help)',
    },
    { args: ['alarm-demo', '--alarm', 'cpu'], line: "rmq-bench: --alarm: 'cpu' is not one of memory, disk (run rmq-bench alarm-demo --help)" },
    {
      args: ['producer', '--blocked-timeout', 'soon'],
      line: "rmq-bench: --blocked-timeout: 'soon' is not a duration (examples: 500ms, 5s, 1m30s) (run rmq-bench producer --help)",
    },
    // commander's own messages, in the shape of ours (it prints them; main maps them to 2).
    { args: ['frobnicate'], line: "rmq-bench: unknown command 'frobnicate' (run rmq-bench --help)" },
    { args: ['verify'], line: "rmq-bench: required option '--ledger <file>' not specified (run rmq-bench verify --help)" },
    {
      args: ['failover', '--fault', 'nuke'],
      line: `rmq-bench: --fault: 'nuke' is not one of ${FAULT_KINDS.join(', ')} (run rmq-bench failover --help)`,
    },
    { args: ['failover', '--bandwidth', '1mbit'], line: "rmq-bench: --bandwidth goes with the slow-link fault (not 'kill') (run rmq-bench failover --help)" },
    {
      args: ['chaos', '--faults', 'kill', '--bandwidth', '1mbit'],
      line: "rmq-bench: --bandwidth goes with the slow-link fault (not 'kill') (run rmq-bench chaos --help)",
    },
    {
      args: ['failover', '--fault', 'slow-link', '--bandwidth', '1kbit'],
      line: "rmq-bench: --bandwidth: '1kbit' is not a rate of at least 8kbit in tc's units (256kbit, 2mbit, 1gbit) (run rmq-bench failover --help)",
    },
    {
      args: ['failover', '--junit', '/no/such/dir/out.xml'],
      line: "rmq-bench: --junit: cannot write '/no/such/dir/out.xml': directory '/no/such/dir' does not exist or is not writable (run rmq-bench failover --help)",
    },
    { args: ['compare', '--max-lost', '-1'], line: "rmq-bench: --max-lost: '-1' is not a whole number >= 0 (run rmq-bench compare --help)" },
    { args: ['chaos', '--max-stall', '5'], line: "rmq-bench: --max-stall: '5' has no unit: write 5ms or 5s (run rmq-bench chaos --help)" },
    // A threshold on a figure the command does not measure: not one of its options.
    { args: ['failover', '--max-lost', '0'], line: "rmq-bench: unknown option '--max-lost' (run rmq-bench failover --help)" },
    { args: ['chaos', '--max-election', '5s'], line: "rmq-bench: unknown option '--max-election' (run rmq-bench chaos --help)" },
    { args: ['dlq', 'replay', '--limit', '0'], line: "rmq-bench: --limit: '0' is not a positive whole number (run rmq-bench dlq replay --help)" },
    { args: ['report', '--html', 'index.html'], line: "rmq-bench: missing required argument 'files-or-folders' (run rmq-bench report --help)" },
    { args: ['report', 'smoke-results'], line: "rmq-bench: required option '--html <file>' not specified (run rmq-bench report --help)" },
    {
      args: ['report', 'smoke-results', '--html', '/no/such/dir/index.html'],
      line: "rmq-bench: --html: cannot write '/no/such/dir/index.html': directory '/no/such/dir' does not exist or is not writable (run rmq-bench report --help)",
    },
    {
      args: ['producer', '--ledger', '/nonexistent/dir/run.json'],
      line: "rmq-bench: --ledger: cannot write '/nonexistent/dir/run.json': directory '/nonexistent/dir' does not exist or is not writable (run rmq-bench producer --help)",
    },
    {
      args: ['report', 'a.json', 'b.json', '--html', './b.json'],
      line: 'rmq-bench: the page ./b.json is also one of the inputs (run rmq-bench report --help)',
    },
    {
      args: ['producer', '--urls', 'http://u:secret@h'],
      line: 'rmq-bench: --urls: the URL is not an amqp:// or amqps:// URL (run rmq-bench producer --help)',
    },
  ];

  it.each(cases)('$args', refusedWithOneLine);
  // The same refusals under --json: stdout holds the error document, stderr the same line.
  it.each(cases.filter((c) => !c.args.includes('--json')).map((c) => ({ ...c, args: [...c.args, '--json'] })))('$args', refusedWithOneLine);
});

describe('contradicting combinations: refused with one line, exit 2, never silently resolved', () => {
  const cases: { args: string[]; line: string }[] = [
    {
      args: ['bench', '--protocol', 'amqp10', '--confirm-mode', 'tx,async'],
      line: 'rmq-bench: --confirm-mode tx: not in AMQP 1.0, which has async, sync, none (run rmq-bench bench --help)',
    },
    {
      args: ['producer', '--protocol', 'amqp10', '--tx'],
      line: 'rmq-bench: --tx is AMQP 0-9-1 (transactions); with --protocol amqp10 each transfer has its own outcome (run rmq-bench producer --help)',
    },
    {
      args: ['producer', '--protocol', 'amqp10', '--confirm-mode', 'batch'],
      line: 'rmq-bench: --confirm-mode batch is AMQP 0-9-1; with --protocol amqp10 use async (up to --window unsettled) or sync (run rmq-bench producer --help)',
    },
    {
      args: ['producer', '--protocol', 'amqp10', '--mandatory'],
      line: 'rmq-bench: --mandatory does nothing with --protocol amqp10 (the broker always answers an unroutable transfer with released) (run rmq-bench producer --help)',
    },
    {
      args: ['producer', '--protocol', 'amqp10', '--outbox', 'o.sqlite'],
      line: 'rmq-bench: --outbox relays over AMQP 0-9-1; leave out --protocol amqp10 (run rmq-bench producer --help)',
    },
    {
      args: ['producer', '--confirms=false', '--confirm-mode', 'sync'],
      line: 'rmq-bench: --confirm-mode does nothing with --confirms=false (no confirms to wait for) (run rmq-bench producer --help)',
    },
    {
      args: ['producer', '--no-confirms', '--window', '8'],
      line: 'rmq-bench: --window does nothing with --confirms=false (no confirms to wait for) (run rmq-bench producer --help)',
    },
    {
      args: ['producer', '--confirms=false', '--confirm-timeout', '1s'],
      line: 'rmq-bench: --confirm-timeout does nothing with --confirms=false (no confirms to wait for) (run rmq-bench producer --help)',
    },
    {
      args: ['producer', '--tx', '--confirm-mode', 'batch'],
      line: 'rmq-bench: --confirm-mode does nothing with --tx (AMQP transactions instead of confirms) (run rmq-bench producer --help)',
    },
    {
      args: ['producer', '--tx', '--confirms'],
      line: 'rmq-bench: --confirms does nothing with --tx (AMQP transactions instead of confirms) (run rmq-bench producer --help)',
    },
    {
      args: ['producer', '--tx', '--window', '8'],
      line: 'rmq-bench: --window does nothing with --tx (AMQP transactions instead of confirms) (run rmq-bench producer --help)',
    },
    {
      args: ['producer', '--confirm-mode', 'sync', '--window', '8'],
      line: 'rmq-bench: --window is for --confirm-mode async, not sync (run rmq-bench producer --help)',
    },
    {
      args: ['producer', '--batch-size', '10'],
      line: 'rmq-bench: --batch-size is for --confirm-mode batch and --tx, not --confirm-mode async (run rmq-bench producer --help)',
    },
    {
      args: ['failover', '--election-timeout', '0'],
      line: "rmq-bench: --election-timeout: '0' is not a duration above zero (run rmq-bench failover --help)",
    },
    {
      args: ['failover', '--no-restore', '--rejoin-timeout', '1m'],
      line: 'rmq-bench: --rejoin-timeout does nothing with --no-restore (the node is left faulted) (run rmq-bench failover --help)',
    },
    { args: ['compare', '--fault', 'none', '--fault-at', '0.5'], line: 'rmq-bench: --fault-at does nothing with --fault none (run rmq-bench compare --help)' },
    {
      args: ['compare', '--fault', 'none', '--hold', '5s'],
      line: 'rmq-bench: --hold does nothing with --fault none (run rmq-bench compare --help)',
    },
    // The native stream protocol publishes to a stream only, always confirmed, on this cluster's stream ports.
    {
      args: ['compare', '--protocol', 'stream'],
      line: 'rmq-bench: --protocol stream publishes over the native stream protocol, to a stream only: give --queue-type stream (not quorum) (run rmq-bench compare --help)',
    },
    {
      args: ['compare', '--protocol', 'stream', '--queue-type', 'stream', '--confirms', 'off'],
      line: 'rmq-bench: --confirms off does not go with --protocol stream: the native stream protocol confirms every message (async) (run rmq-bench compare --help)',
    },
    {
      args: ['compare', '--protocol', 'stream', '--queue-type', 'stream', '--urls', 'amqp://demo:demo@127.0.0.1:5672'],
      line: "rmq-bench: --urls does not go with --protocol stream: it connects to the stream ports of this cluster's nodes (run rmq-bench compare --help)",
    },
    {
      args: ['compare', '--protocol', 'stream', '--queue-type', 'stream', '--exchange', 'x'],
      line: 'rmq-bench: --exchange does not go with --protocol stream: the native stream protocol publishes to the stream by name (run rmq-bench compare --help)',
    },
    {
      args: ['compare', '--confirms', 'off', '--window', '64'],
      line: 'rmq-bench: --window does nothing with --confirms off (run rmq-bench compare --help)',
    },
    {
      args: ['consumer', '--autoack', '--prefetch', '5'],
      line: 'rmq-bench: --prefetch does nothing with --autoack (no acks: the broker does not wait for them) (run rmq-bench consumer --help)',
    },
    {
      args: ['consumer', '--autoack', '--multi-ack-every', '5'],
      line: 'rmq-bench: --multi-ack-every does nothing with --autoack (no acks: the broker does not wait for them) (run rmq-bench consumer --help)',
    },
    {
      args: ['consumer', '--nack', '--prefetch', '5'],
      line: 'rmq-bench: --prefetch does nothing with --nack (it closes the connection at the first delivery, with prefetch 1) (run rmq-bench consumer --help)',
    },
    {
      args: ['consumer-crash', '--modes', 'autoack', '--prefetch', '5'],
      line: 'rmq-bench: --prefetch is for the manual ack modes, which --modes autoack leaves out (run rmq-bench consumer-crash --help)',
    },
    {
      args: ['producer-crash', '--modes', 'outbox', '--print-every', '10'],
      line: 'rmq-bench: --print-every is for the naive mode, which --modes leaves out (run rmq-bench producer-crash --help)',
    },
    {
      args: ['watch', '--once', '--interval', '2s'],
      line: 'rmq-bench: --interval does nothing with --once (one snapshot, no refresh) (run rmq-bench watch --help)',
    },
    { args: ['cluster', 'up', '--timeout', '0'], line: "rmq-bench: --timeout: '0' is not a duration above zero (run rmq-bench cluster up --help)" },
  ];

  it.each(cases)('$args', refusedWithOneLine);
});

describe('help and version through main(): stdout, exit 0', () => {
  it.each([[['--help']], [['producer', '--help']], [['help', 'cluster']], [['--version']]])('%j', async (args) => {
    const r = await runMain(args);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).not.toBe('');
    expect(r.stderr).toBe('');
  });
});

describe('version, help and groups through main()', () => {
  it.each([['-v'], ['-V'], ['--version']])('%s prints the version on stdout, exit 0', async (flag) => {
    const r = await runMain([flag]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    expect(r.stderr).toBe('');
  });

  it.each([[['cluster']], [['dlq']], [[]]])('%j alone: its help on stderr, exit 1 (as git does)', async (args) => {
    const r = await runMain(args);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/^Usage: rmq-bench/);
    expect(r.stdout).toBe('');
  });

  it('rmq-bench help cluster is asked for: stdout, exit 0', async () => {
    const r = await runMain(['help', 'cluster']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^Usage: rmq-bench cluster/);
  });

  it('the root help lists -v, examples, the environment and every exit code', async () => {
    const r = await runMain(['--help']);
    expect(r.stdout).toContain('-v, --version');
    expect(r.stdout).toContain('Examples:\n  $ rmq-bench ');
    expect(r.stdout).toContain('Environment:\n  RMQ_BENCH_NAME');
    expect(r.stdout).toContain('NO_COLOR');
    for (const code of [0, 1, 2, 65, 66, 68, 69, 70, 73, 74, 75, 130, 141, 143]) expect(r.stdout).toMatch(new RegExp(`^  ${code} +\\S`, 'm'));
  });

  it.each([['producer'], ['consumer'], ['cluster', 'up'], ['dlq', 'replay'], ['compare'], ['bench']])(
    '%s --help: examples, and no "(default: false)" on a switch',
    async (...words) => {
      const r = await runMain([...words, '--help']);
      expect(r.exitCode).toBe(0);
      expect(r.stdout).toContain(`Examples:\n  $ rmq-bench ${words.join(' ')}`);
      expect(r.stdout).not.toContain('default: false');
    },
  );
});

describe('errors: one prefix and one shape, commander or ours, credentials masked', () => {
  it.each([
    { args: ['cluster', 'up', '--bogus'], line: "rmq-bench: unknown option '--bogus' (run rmq-bench cluster up --help)" },
    { args: ['cluster', 'explode'], line: "rmq-bench: unknown command 'explode' (run rmq-bench cluster --help)" },
    // A suggestion stays on the line; a command of a group is suggested from the top level too.
    { args: ['compar'], line: "rmq-bench: unknown command 'compar': did you mean compare? (run rmq-bench --help)" },
    { args: ['status'], line: "rmq-bench: unknown command 'status': did you mean 'rmq-bench cluster status'? (run rmq-bench --help)" },
    { args: ['cluster', 'stauts'], line: "rmq-bench: unknown command 'stauts': did you mean status? (run rmq-bench cluster --help)" },
    { args: ['producer', '--cofirms'], line: "rmq-bench: unknown option '--cofirms': did you mean --confirms? (run rmq-bench producer --help)" },
    { args: ['consumer', '-n', '0'], line: "rmq-bench: -n/--count: '0' is not a positive whole number (run rmq-bench consumer --help)" },
    {
      args: ['cluster', 'logs', 'rabbit9'],
      line: expect.stringMatching(/^rmq-bench: <node>: 'rabbit9' is not a node .* \(run rmq-bench cluster logs --help\)$/),
    },
    { args: ['watch', '--json'], line: 'rmq-bench: --json needs --once (one snapshot, one JSON document) (run rmq-bench watch --help)' },
    {
      args: ['audit', '--management-urls', 'ftp://user:s3cret@h'],
      line: 'rmq-bench: --management-urls: entry 1 is not an http(s):// URL (run rmq-bench audit --help)',
    },
    {
      args: ['producer', '--urls', 'amqp//u:s3cret@h'],
      line: expect.stringMatching(/^rmq-bench: --urls: .* \(run rmq-bench producer --help\)$/),
    },
  ])('$args', async ({ args, line }) => {
    const r = await runMain(args as string[]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([line]);
    expect(r.stderr).not.toContain('s3cret');
  });
});

describe('a renamed flag in its old spelling: a one-line notice, then the command as with the new one', () => {
  it('compare --mode off --window 64: the notice, then the same refusal as with --confirms off', async () => {
    const r = await runMain(['compare', '--mode', 'off', '--window', '64']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      'rmq-bench: --mode is now --confirms (the old name goes in a later release)',
      'rmq-bench: --window does nothing with --confirms off (run rmq-bench compare --help)',
    ]);
    expect(r.stdout).toBe('');
  });

  it.each([
    { args: ['dlq', 'inspect', '-n', '0', '--json'], notice: '-n is now --limit', error: "--limit: '0' is not a positive whole number" },
    {
      args: ['report', 'a.json', '--output', '/no/such/dir/i.html', '--json'],
      notice: '--output is now --html',
      error: "--html: cannot write '/no/such/dir/i.html'",
    },
    {
      args: ['consumer-timeout-demo', '--timeout', '50ms', '--json'],
      notice: '--timeout is now --consumer-timeout',
      error: '--consumer-timeout 50ms is too short',
    },
    { args: ['bench', '--time', '0', '--json'], notice: '--time is now --duration', error: "--duration: '0' is not a duration above zero" },
  ])('$args: the notice on stderr, the error document alone on stdout', async ({ args, notice, error }) => {
    const r = await runMain(args);
    expect(r.exitCode).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines[0]).toBe(`rmq-bench: ${notice} (the old name goes in a later release)`);
    expect(lines.slice(1).join('\n')).toContain(error);
    expect(JSON.parse(r.stdout)).toMatchObject({ kind: 'error', exitCode: 2, message: expect.stringContaining(error) });
  });
});
