import { InvalidArgumentError, Option, type Command } from 'commander';
import type { PublishMode } from '../amqp/publisher.js';
import { parseUrls } from '../amqp/connect.js';
import { UsageError } from '../errors.js';
import { BENCH_MODES, type BenchOptions } from '../scenarios/bench.js';
import { durationMs, heartbeatSeconds, htmlOption, nonNegativeInt, positiveInt, prefetchCount } from './options.js';

/** `rmq-bench bench`: its commander definition and typed invocation (kept out of program.ts). */
export interface BenchCliOptions extends BenchOptions {
  json: boolean;
  /** --html: also write a self-contained HTML report here. */
  html: string | undefined;
  /** One row per second per mode. */
  csvFile: string | undefined;
}

export type BenchInvocation = { command: 'bench'; options: BenchCliOptions };

/** Without -z and -C, each mode publishes for this long. */
export const DEFAULT_BENCH_DURATION_MS = 10_000;

function list(value: string): string[] {
  const items = value.split(',').map((v) => v.trim()).filter(Boolean);
  if (items.length === 0) throw new InvalidArgumentError('no value given');
  return items;
}

/** A duration above zero. */
function positiveDurationMs(value: string): number {
  const v = durationMs(value);
  if (v <= 0) throw new InvalidArgumentError(`'${value}' is not a duration above zero`);
  return v;
}

/** 'async' | 'none,sync' → modes, in the order given, each once. */
export function modeList(value: string): PublishMode[] {
  const modes: PublishMode[] = [];
  for (const m of list(value)) {
    if (!(BENCH_MODES as readonly string[]).includes(m)) throw new InvalidArgumentError(`'${m}' is not one of ${BENCH_MODES.join(', ')}`);
    if (!modes.includes(m as PublishMode)) modes.push(m as PublishMode);
  }
  return modes;
}

/** '256' | '64,256,1024' → windows, each once. */
export function windowList(value: string): number[] {
  return [...new Set(list(value).map(positiveInt))];
}

interface RawOptions {
  json: boolean;
  mode: PublishMode[];
  window: number[];
  batchSize: number;
  producers: number;
  consumers: number;
  size: number;
  time?: number;
  pmessages?: number;
  rate: number;
  prefetch: number;
  multiAckEvery: number;
  drainTimeout: number;
  confirmTimeout: number;
  heartbeat: number;
  urls?: string[];
  csv?: string;
  html?: string;
}

export function registerBench(program: Command, dispatch: (invocation: BenchInvocation) => Promise<void>): void {
  program
    .command('bench')
    .description('the same workload in each publishing mode, side by side: publish and consume rates, confirm and end-to-end latency, client CPU and RSS')
    .addOption(new Option('--mode <list>', `comma-separated, run in this order: ${BENCH_MODES.join(', ')}`).argParser(modeList).default([...BENCH_MODES], 'all five'))
    .addOption(new Option('--window <list>', 'async: unconfirmed messages at most; several values (64,256) run async once each').argParser(windowList).default([256], '256'))
    .addOption(new Option('--batch-size <n>', 'batch: wait for the confirms every N; tx: commit every N').argParser(positiveInt).default(100))
    .addOption(new Option('-x, --producers <n>', 'producers (each on its own connection)').argParser(positiveInt).default(1))
    .addOption(new Option('-y, --consumers <n>', 'consumers (each on its own connection); 0: nothing consumes').argParser(nonNegativeInt).default(1))
    .addOption(new Option('-s, --size <bytes>', 'message body size').argParser(nonNegativeInt).default(100))
    .addOption(new Option('-z, --time <duration>', `each mode publishes for this long (default without -C: ${DEFAULT_BENCH_DURATION_MS / 1000}s)`).argParser(positiveDurationMs))
    .addOption(new Option('-C, --pmessages <n>', 'each producer publishes at most N messages per mode').argParser(positiveInt))
    .addOption(new Option('-r, --rate <n>', 'messages per second per producer; 0 = as fast as possible').argParser(nonNegativeInt).default(0))
    .addOption(new Option('--prefetch <n>', 'consumers: unacked deliveries at most (0 = unlimited)').argParser(prefetchCount).default(100))
    .addOption(new Option('--multi-ack-every <n>', 'consumers: one multiple-ack every N messages').argParser(positiveInt).default(1))
    .addOption(new Option('--drain-timeout <duration>', 'after publishing stops, how long consumers may take to read the rest').argParser(durationMs).default(30_000, '30s'))
    .addOption(new Option('--confirm-timeout <duration>', 'a confirm not received within this is indeterminate (published again)').argParser(durationMs).default(30_000, '30s'))
    .addOption(new Option('--heartbeat <duration>', 'AMQP heartbeat').argParser(durationMs).default(5_000, '5s'))
    .addOption(
      new Option('--urls <list>', 'comma-separated AMQP URLs (default: rabbit1..3 with user demo)').argParser((v) => {
        try {
          return parseUrls(v);
        } catch (err) {
          throw new InvalidArgumentError(err instanceof Error ? err.message.replace(/^--urls: /, '') : String(err));
        }
      }),
    )
    .option('--csv <file>', 'also write one row per second per mode to this CSV file')
    .addOption(new Option('--json', 'print one JSON document on stdout (people-facing output stays on stderr)').default(false))
    .addOption(htmlOption())
    .action(function (this: Command, o: RawOptions) {
      const given = (name: string): boolean => this.getOptionValueSource(name) === 'cli';
      if (given('window') && !o.mode.includes('async')) throw new UsageError('--window applies to async confirms: add async to --mode');
      if (given('batchSize') && !o.mode.includes('batch') && !o.mode.includes('tx')) throw new UsageError('--batch-size applies to batch and tx: add one of them to --mode');
      if (o.consumers === 0 && (given('prefetch') || given('multiAckEvery'))) throw new UsageError('--prefetch and --multi-ack-every apply to consumers: -y is 0');
      return dispatch({
        command: 'bench',
        options: {
          json: o.json,
          html: o.html,
          csvFile: o.csv,
          modes: o.mode,
          windows: o.window,
          batchSize: o.batchSize,
          producers: o.producers,
          consumers: o.consumers,
          sizeBytes: o.size,
          ratePerSec: o.rate,
          durationMs: o.time ?? (o.pmessages === undefined ? DEFAULT_BENCH_DURATION_MS : undefined),
          count: o.pmessages,
          prefetch: o.prefetch,
          ackEvery: o.multiAckEvery,
          drainTimeoutMs: o.drainTimeout,
          confirmTimeoutMs: o.confirmTimeout,
          heartbeatS: heartbeatSeconds(o.heartbeat),
          reconnectTimeoutMs: 10_000,
          urls: o.urls,
        },
      });
    });
}
