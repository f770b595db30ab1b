import { InvalidArgumentError, Option, type Command } from 'commander';
import type { PublishMode } from '../../client/amqp091/publisher.js';
import { InterruptedError, UsageError } from '../../errors.js';
import { BENCH_MODES } from '../../scenarios/traffic/bench-modes.js';
import { PROTOCOLS, type Protocol, traitsOf } from '../../client/protocol.js';
import type { BenchOptions } from '../../scenarios/traffic/bench.js';
import { defineCommand } from '../command.js';
import {
  countOption,
  durationOption,
  timeoutOption,
  heartbeatOption,
  heartbeatSeconds,
  htmlOption,
  jsonOption,
  multiAckEveryOption,
  nonNegativeInt,
  positiveDurationMs,
  positiveInt,
  prefetchOption,
  protocolOption,
  rateOption,
  sizeOption,
  urlsOption,
  writableFile,
} from '../options.js';
import { metricsPortOption } from '../metrics-option.js';

/** `rmq-bench bench`: the same workload in each publishing mode, side by side. */
export interface BenchCliOptions extends BenchOptions {
  json: boolean;
  /** --html: also write a self-contained HTML report here. */
  html: string | undefined;
  /** One row per second per mode. */
  csvFile: string | undefined;
  /** --metrics-port: the live figures for Prometheus while the run goes on. */
  metricsPort: number | undefined;
}

/** 'bench-async256-k3x9q (leader rabbit1)', or with several: 'bench-async256-k3x9q-1..3 (leaders rabbit1, rabbit2, rabbit3)'. */
export function queuesText(queues: readonly string[], leaders: readonly (string | null)[]): string {
  const known = leaders.some((l) => l !== null);
  if (queues.length === 1) return `${queues[0]}${known ? ` (leader ${leaders[0] ?? '?'})` : ''}`;
  const stem = queues[0]!.replace(/-1$/, '');
  return `${stem}-1..${queues.length}${known ? ` (leaders ${leaders.map((l) => l ?? '?').join(', ')})` : ''}`;
}

/** Without -z and -C, each mode publishes for this long. */
const DEFAULT_BENCH_DURATION_MS = 10_000;

function list(value: string): string[] {
  const items = value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
  if (items.length === 0) throw new InvalidArgumentError('no value given');
  return items;
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

/**
 * --queues N spreads producer and consumer i onto queue i mod N: every queue needs a producer, and
 * a consumer unless nothing consumes (a queue nobody reads would never drain).
 */
export function checkQueueSpread(queues: number, producers: number, consumers: number): void {
  if (producers < queues) throw new UsageError(`--queues ${queues} needs a producer per queue: give -x ${queues} or more (-x is ${producers})`);
  if (consumers > 0 && consumers < queues)
    throw new UsageError(`--queues ${queues} needs a consumer per queue: give -y ${queues} or more, or -y 0 for none (-y is ${consumers})`);
}

interface RawOptions {
  json: boolean;
  protocol: Protocol | 'both';
  confirmMode: PublishMode[];
  window: number[];
  batchSize: number;
  producers: number;
  consumers: number;
  queues: number;
  size: number;
  duration?: number;
  count?: number;
  pmessages?: number;
  rate: number;
  prefetch: number;
  multiAckEvery: number;
  drainTimeout: number;
  confirmTimeout: number;
  heartbeat: number;
  urls?: string[];
  csv?: string;
  metricsPort?: number;
  html?: string;
}

export const bench = defineCommand({
  name: 'bench',
  examples: ['bench --confirm-mode sync,async -z 10s', 'bench -x 2 -y 2 -n 10000 --csv samples.csv --html bench.html'],
  register: (command, dispatch: (o: BenchCliOptions) => Promise<void>) =>
    command
      .summary('publishing modes side by side: rates, latency')
      .description('the same workload in each publishing mode, side by side: publish and consume rates, confirm and end-to-end latency, client CPU and RSS')
      .addOption(
        new Option('--confirm-mode <list>', `comma-separated, run in this order: ${BENCH_MODES.join(', ')}`)
          .argParser(modeList)
          .default([...BENCH_MODES], 'all five'),
      )
      .addOption(
        new Option('--window <list>', 'async: unconfirmed messages at most; several values (64,256) run async once each')
          .argParser(windowList)
          .default([256], '256'),
      )
      .addOption(new Option('--batch-size <n>', 'batch: wait for the confirms every N; tx: commit every N').argParser(positiveInt).default(100))
      .addOption(new Option('-x, --producers <n>', 'producers (each on its own connection)').argParser(positiveInt).default(1))
      .addOption(new Option('-y, --consumers <n>', 'consumers (each on its own connection); 0: nothing consumes').argParser(nonNegativeInt).default(1))
      .addOption(
        new Option('--queues <n>', 'quorum queues per mode, leaders spread over the nodes; -x and -y spread round-robin over them')
          .argParser(positiveInt)
          .default(1),
      )
      .addOption(protocolOption('amqp10: over AMQP 1.0 (none, sync, async; no tx or batch); both: every mode over each, side by side', [...PROTOCOLS, 'both']))
      .addOption(sizeOption())
      .addOption(
        new Option('-z, --duration <duration>', `each mode publishes for this long (default: ${DEFAULT_BENCH_DURATION_MS / 1000}s without -n)`).argParser(
          positiveDurationMs,
        ),
      )
      .addOption(countOption('each producer publishes at most N messages per mode (PerfTest: -C)'))
      .addOption(new Option('-C, --pmessages <n>', "PerfTest's spelling of -n").argParser(positiveInt).conflicts('count').hideHelp())
      .addOption(rateOption('messages per second per producer; 0 = as fast as possible', 0))
      .addOption(prefetchOption('consumers: unacked deliveries at most (0 = unlimited)', 100))
      .addOption(multiAckEveryOption('consumers: one multiple-ack every N messages', 1))
      .addOption(durationOption('--drain-timeout <duration>', 'after publishing stops, how long consumers may take to read the rest', '30s'))
      .addOption(timeoutOption('--confirm-timeout <duration>', 'a confirm not received within this is indeterminate (published again)', '30s'))
      .addOption(heartbeatOption())
      .addOption(urlsOption('comma-separated AMQP URLs (default: rabbit1..3 with user demo)'))
      .addOption(new Option('--csv <file>', 'also write one row per second per mode to this CSV file').argParser(writableFile))
      .addOption(metricsPortOption())
      .addOption(jsonOption())
      .addOption(htmlOption())
      .action(function (this: Command, o: RawOptions) {
        const given = (name: string): boolean => this.getOptionValueSource(name) === 'cli';
        const count = o.count ?? o.pmessages;
        if (given('window') && !o.confirmMode.includes('async')) throw new UsageError('--window applies to async confirms: add async to --confirm-mode');
        if (given('batchSize') && !o.confirmMode.includes('batch') && !o.confirmMode.includes('tx'))
          throw new UsageError('--batch-size applies to batch and tx: add one of them to --confirm-mode');
        if (o.protocol !== 'both') {
          const { name, publishModes, multipleAcks } = traitsOf(o.protocol);
          const missing = o.confirmMode.filter((m) => !publishModes.includes(m));
          if (given('confirmMode') && missing.length > 0)
            throw new UsageError(`--confirm-mode ${missing.join(',')}: not in ${name}, which has ${publishModes.join(', ')}`);
          if (given('multiAckEvery') && multipleAcks !== true) throw new UsageError(multipleAcks);
        }
        checkQueueSpread(o.queues, o.producers, o.consumers);
        if (o.consumers === 0 && (given('prefetch') || given('multiAckEvery') || given('drainTimeout')))
          throw new UsageError('--prefetch, --multi-ack-every and --drain-timeout apply to consumers: -y is 0');
        return dispatch({
          json: o.json,
          html: o.html,
          csvFile: o.csv,
          metricsPort: o.metricsPort,
          modes: o.confirmMode,
          windows: o.window,
          batchSize: o.batchSize,
          producers: o.producers,
          consumers: o.consumers,
          queues: o.queues,
          sizeBytes: o.size,
          ratePerSec: o.rate,
          durationMs: o.duration ?? (count === undefined ? DEFAULT_BENCH_DURATION_MS : undefined),
          count,
          prefetch: o.prefetch,
          ackEvery: o.multiAckEvery,
          drainTimeoutMs: o.drainTimeout,
          confirmTimeoutMs: o.confirmTimeout,
          heartbeatS: heartbeatSeconds(o.heartbeat),
          reconnectTimeoutMs: 10_000,
          urls: o.urls,
          protocols: o.protocol === 'both' ? [...PROTOCOLS] : [o.protocol],
        });
      }),
  async run(ctx, o) {
    const { json, html, csvFile, metricsPort, ...opts } = o;
    const { requireProtocols } = await import('../require-protocol.js');
    await requireProtocols(ctx, opts.protocols, `--protocol ${opts.protocols.length > 1 ? 'both' : opts.protocols[0]}`);
    const { runBench } = await import('../../scenarios/traffic/bench.js');
    const { renderCsv, renderSampleLine } = await import('../../report/kinds/bench/text.js');
    const { emit } = await import('../output.js');
    const { progress } = ctx;
    const { withMetricsExport } = await import('../metrics-option.js');
    const { benchMetrics } = await import('../../measure/metrics-export.js');
    const r = await withMetricsExport(progress, metricsPort, (registry) => {
      const feed = registry ? benchMetrics(registry) : undefined;
      return runBench(ctx, opts, {
        onRunStart: (spec, queues, leaders) => progress.info(`${spec.label}: publishing into ${queuesText(queues, leaders)}`),
        onSample: (spec, s) => {
          feed?.(spec.label, s);
          progress.info(renderSampleLine(spec.label, s, spec.mode !== 'none'));
        },
      });
    });
    emit({ json, html, broker: await ctx.broker() }, 'bench', r, {
      files: csvFile === undefined ? [] : [{ flag: '--csv', path: csvFile, content: () => renderCsv(r.runs) }],
    });
    if (r.interrupted) throw new InterruptedError('interrupted: the figures above are what was measured until Ctrl+C');
  },
});
