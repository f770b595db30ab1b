import type { QueueType } from '../../cluster/broker/queue-types.js';
import { type Command, Option } from 'commander';
import { FAULT_KINDS, type FaultKind, REPEATABLE_FAULT_KINDS } from '../../faults/kinds.js';
import { faultsHelpText, helpWidth } from '../help.js';
import { InterruptedError, UsageError } from '../../errors.js';
import type { ChaosLedgers, ChaosRunOptions } from '../../scenarios/under-faults/chaos.js';
import { CHAOS_TARGETS, type ChaosTarget } from '../../scenarios/under-faults/chaos-plan.js';
import { applyProfile, CHAOS_PROFILES, type ChaosProfile } from '../../scenarios/under-faults/chaos-profiles.js';
import type { Protocol } from '../../client/protocol.js';
import { formatDuration } from '../../util/duration.js';
import { defineCommand } from '../command.js';
import { addVerdictOptions, emitVerdict, type VerdictOptions, verdictOptions } from '../verdict-options.js';
import type { OutputFile } from '../output.js';
import { addReportAndClusterOptions, otherClusterOverride, type ReportAndClusterOptions } from '../fault-command.js';
import {
  choiceList,
  durationOption,
  givenOptions,
  nonNegativeInt,
  timeoutOption,
  heartbeatOption,
  heartbeatSeconds,
  jitterOption,
  bandwidthFrom,
  bandwidthOption,
  latencyOption,
  lossOption,
  netemFrom,
  positiveInt,
  positiveNumber,
  prefetchOption,
  protocolOption,
  queueTypeOption,
  randomSeed,
  seedValue,
  sizeOption,
  vhostOption,
  windowOption,
  writableFile,
} from '../options.js';
import { metricsPortOption } from '../metrics-option.js';

/** `rmq-bench chaos`: a long run under a nemesis, every message reconciled (issue #13). */
export interface ChaosCliOptions extends Omit<ChaosRunOptions, 'seed'>, ReportAndClusterOptions {
  /** undefined: a random one, shown in the report. */
  seed: number | undefined;
  /** --ledger: where every producer's ledger is written after the run. */
  ledgerFile: string | undefined;
  /** --metrics-port: the live figures for Prometheus while the run goes on. */
  metricsPort: number | undefined;
  /** --max-lost and the other thresholds. */
  verdict: VerdictOptions;
}

interface RawOptions {
  duration: number;
  interval: number;
  hold: number;
  faultCount?: number;
  faults?: FaultKind[];
  targets: ChaosTarget[];
  seed?: number;
  producers: number;
  consumers: number;
  polling: number;
  profile?: ChaosProfile;
  queues: number;
  queuePrefix: string;
  queueType: QueueType;
  vhost: string;
  rate: number;
  window: number;
  size: number;
  confirmTimeout: number;
  heartbeat: number;
  prefetch: number;
  control: boolean;
  latency?: number;
  jitter?: number;
  loss?: number;
  bandwidth?: string;
  store?: string;
  ledger?: string;
  metricsPort?: number;
  protocol: Protocol;
  urls?: string[];
  managementUrls?: string[];
  faultCmd?: string;
  restoreCmd?: string;
  json: boolean;
  html?: string;
}

/** Option combinations a parser cannot check, as one-line UsageErrors. */
function chaosOptions(o: RawOptions): ChaosCliOptions {
  if (o.restoreCmd !== undefined && o.faultCmd === undefined) throw new UsageError('--restore-cmd needs --fault-cmd');
  const d = formatDuration;
  if (o.hold >= o.interval) throw new UsageError(`--hold ${d(o.hold)} must be shorter than --interval ${d(o.interval)}`);
  if (o.interval > o.duration) throw new UsageError(`--interval ${d(o.interval)} is longer than --duration ${d(o.duration)}: no fault would run`);
  if (o.consumers < o.queues) throw new UsageError(`--consumers ${o.consumers} leaves some of the ${o.queues} queues without a consumer`);
  const faults = o.faults ?? [...REPEATABLE_FAULT_KINDS];
  const netemKind = faults.includes('latency') ? 'latency' : 'none';
  if (netemKind === 'none' && (o.latency !== undefined || o.jitter !== undefined || o.loss !== undefined))
    throw new UsageError('--latency, --jitter and --loss are for the latency fault, which --faults leaves out');
  return {
    durationMs: o.duration,
    intervalMs: o.interval,
    holdMs: o.hold,
    faultCount: o.faultCount,
    faults,
    faultsGiven: o.faults !== undefined,
    targets: o.targets,
    seed: o.seed,
    producers: o.producers,
    consumers: o.consumers,
    polling: o.polling,
    queues: o.queues,
    queuePrefix: o.queuePrefix,
    queueType: o.queueType,
    vhost: o.vhost,
    ratePerSec: o.rate,
    window: o.window,
    sizeBytes: o.size,
    confirmTimeoutMs: o.confirmTimeout,
    heartbeatS: heartbeatSeconds(o.heartbeat),
    prefetch: o.prefetch,
    control: o.control,
    netem: netemFrom(netemKind, o),
    bandwidth: bandwidthFrom(faults, o.bandwidth),
    urls: o.urls,
    rejoinTimeoutMs: 180_000,
    drainIdleMs: 5_000,
    storeFile: o.store,
    ledgerFile: o.ledger,
    metricsPort: o.metricsPort,
    protocol: o.protocol,
    managementUrls: o.managementUrls,
    faultCmd: o.faultCmd,
    restoreCmd: o.restoreCmd,
    json: o.json,
    html: o.html,
    verdict: verdictOptions(o, 'chaos'),
  };
}

const listOf =
  <T extends string>(allowed: readonly T[]) =>
  (value: string): T[] =>
    choiceList(value, allowed);

export const chaos = defineCommand({
  name: 'chaos',
  examples: ['chaos --duration 60s --interval 15s --hold 4s --seed 1', 'chaos --faults kill,pause --control --html chaos.html'],
  register: (command, dispatch: (o: ChaosCliOptions) => Promise<void>) =>
    addVerdictOptions(
      addReportAndClusterOptions(
        command
          .summary('faults on a schedule, every message reconciled')
          .description(
            'a long run under a nemesis: producers with confirms, consumers with an idempotent store, faults on a schedule, every message reconciled',
          )
          .addOption(durationOption('-z, --duration <duration>', 'how long traffic flows and faults are injected', '5m'))
          .addOption(durationOption('--interval <duration>', 'from one fault to the next, at least', '20s'))
          .addOption(durationOption('--hold <duration>', 'how long each fault stays on before it is healed', '8s'))
          .addOption(
            new Option(
              '--fault-count <n>',
              'exactly n faults, the same ones for the same --seed; the traffic goes on until --duration has passed and the last of them is healed (default: as many as fit in --duration)',
            ).argParser(positiveInt),
          )
          .addOption(
            new Option(
              '--faults <list>',
              `comma-separated fault kinds, picked in seeded rounds (default: all of ${REPEATABLE_FAULT_KINDS.join(', ')} this host can apply)`,
            ).argParser(listOf(FAULT_KINDS)),
          )
          .addHelpText('after', ({ command, error }) => faultsHelpText(helpWidth(command, error)))
          .addOption(
            new Option('--targets <list>', `whom a fault hits: ${CHAOS_TARGETS.join(', ')}`)
              .argParser(listOf(CHAOS_TARGETS))
              .default([...CHAOS_TARGETS], CHAOS_TARGETS.join(',')),
          )
          .addOption(new Option('--seed <n>', 'seed of the schedule: the same seed, the same faults and targets').argParser(seedValue))
          .addOption(new Option('--producers <n>', 'producers with confirms').argParser(positiveInt).default(3))
          .addOption(new Option('--consumers <n>', 'consumers (manual ack, one idempotent store)').argParser(positiveInt).default(3))
          .addOption(
            new Option('--polling <n>', 'more consumers, polling with basic.get (as rabbitmq/jepsen mixes them in)').argParser(nonNegativeInt).default(0),
          )
          .addOption(
            new Option(
              '--profile <name>',
              "jepsen: rabbitmq/jepsen's schedule: a partition of a random shape on a random node every 20 s of calm, held 10 s, for 180 s, on 5 nodes (the options given win)",
            ).choices(CHAOS_PROFILES),
          )
          .addOption(new Option('--queues <n>', 'queues (quorum unless --queue-type), leaders spread over the nodes').argParser(positiveInt).default(3))
          .addOption(
            queueTypeOption(
              'chaos',
              'quorum, mirrored (a classic queue with ha-mode all, RabbitMQ 3.x) or classic (not stream: chaos consumes its queues); without --faults, quorum-loss and membership are left out for the other two',
            ),
          )
          .addOption(
            new Option('--queue-prefix <name>', 'the queues are <prefix>.1 .. <prefix>.N (deleted first, and again after a run that passed)').default(
              'rmq-bench.chaos',
            ),
          )
          .addOption(vhostOption())
          .addOption(new Option('-r, --rate <n>', 'messages per second, per producer').argParser(positiveNumber).default(200))
          .addOption(windowOption('async confirm window, per producer'))
          .addOption(sizeOption())
          .addOption(timeoutOption('--confirm-timeout <duration>', 'a confirm not received within this is indeterminate (published again)', '5s'))
          .addOption(heartbeatOption())
          .addOption(prefetchOption('consumer prefetch', 100))
          .addOption(
            protocolOption('the producers and consumers: amqp10 publishes with outcomes (the control producer pre-settled) and consumes with link credit'),
          )
          .addOption(new Option('--control', 'one more producer, without confirms, on its own queue, for contrast').default(false))
          .addOption(latencyOption())
          .addOption(jitterOption())
          .addOption(lossOption())
          .addOption(bandwidthOption())
          .addOption(new Option('--store <file>', "the consumers' idempotent SQLite store (default: a temporary file)").argParser(writableFile))
          .addOption(new Option('--ledger <file>', "write every producer's per-message ledger here (JSON: flags per message id)").argParser(writableFile))
          .addOption(metricsPortOption()),
      ),
      'chaos',
    ).action((o: RawOptions, command: Command) => dispatch(chaosOptions(o.profile ? applyProfile(o.profile, o, givenOptions(command)) : o))),
  overrides: otherClusterOverride,
  async run(ctx, o) {
    const { json, html, managementUrls: _m, faultCmd: _f, restoreCmd: _r, seed, ledgerFile, metricsPort, verdict, ...rest } = o;
    const { requireProtocols } = await import('../require-protocol.js');
    if (o.protocol !== undefined) await requireProtocols(ctx, [o.protocol], `--protocol ${o.protocol}`);
    const options: ChaosRunOptions = { ...rest, seed: seed ?? randomSeed() };
    const { runChaos } = await import('../../scenarios/under-faults/chaos.js');
    const { renderChaosLive } = await import('../../report/kinds/chaos/text.js');
    let ledgers: ChaosLedgers | undefined;
    const { withMetricsExport } = await import('../metrics-option.js');
    const { chaosMetrics } = await import('../../measure/metrics-export.js');
    const r = await withMetricsExport(ctx.progress, metricsPort, (registry) => {
      const feed = registry ? chaosMetrics(registry) : undefined;
      return runChaos(ctx, options, {
        onLive: (live) => {
          feed?.(live);
          ctx.progress.update(renderChaosLive(live));
        },
        onLedgers: (l) => {
          ledgers = l;
        },
      });
    });
    // Written after the result is printed: a write that fails costs the file, not the result (exit 74).
    const files: OutputFile[] =
      ledgerFile === undefined || ledgers === undefined ? [] : [{ flag: '--ledger', path: ledgerFile, content: () => JSON.stringify(ledgers) }];
    const ok = await emitVerdict({ json, html, broker: await ctx.broker() }, verdict, 'chaos', r, { files });
    if (r.interrupted) throw new InterruptedError('interrupted: the nemesis healed its fault; the figures above are what was measured until Ctrl+C');
    return { ok };
  },
});
