import { type Command, Option } from 'commander';
import { FAULT_KINDS, type FaultKind, faultProblem, oneShotProblem } from '../../faults/kinds.js';
import { faultsHelpText, helpWidth } from '../help.js';
import { InterruptedError, UsageError } from '../../errors.js';
import { ownQueueName, type QueueType } from '../../cluster/broker/queue-types.js';
import { type CompareOptions, faultPatienceMs } from '../../scenarios/under-faults/compare.js';
import { compareModes } from '../../scenarios/under-faults/compare-modes.js';
import { type AnyProtocol, confirmsOffProblem, PUBLISH_PROTOCOLS, queueTypeProblem, traitsOf } from '../../client/protocol.js';
import { defineCommand } from '../command.js';
import { DEFAULT_MAX_STUCK_MS, STATS_LAG_MS } from '../../measure/stuck-deliveries.js';
import { formatDuration } from '../../util/duration.js';
import { addVerdictOptions, emitVerdict, type VerdictOptions, verdictOptions } from '../verdict-options.js';
import { checkpointCmdOption, checkpointOverride } from '../checkpoint-option.js';
import { addReportAndClusterOptions, checkedFault, otherClusterOverride, type ReportAndClusterOptions } from '../fault-command.js';
import {
  countOption,
  durationOption,
  givenOptions,
  timeoutOption,
  heartbeatOption,
  heartbeatSeconds,
  jitterOption,
  bandwidthFrom,
  bandwidthOption,
  type ConfirmsSide,
  confirmsSideOption,
  latencyOption,
  lossOption,
  netemFrom,
  protocolOption,
  queueOption,
  queueTypeOption,
  rateOption,
  refuseWith,
  runsOption,
  share,
  sizeOption,
  vhostOption,
  windowOption,
} from '../options.js';

/** `rmq-bench compare`, the main demo: confirms on vs off, each under a fault on the queue leader. */
export interface CompareCliOptions extends Omit<CompareOptions, 'routingKey'>, ReportAndClusterOptions {
  /** --checkpoint-cmd: the user's command before each run's drain. */
  checkpointCmd: string | undefined;
  /** --max-lost and the other thresholds. */
  verdict: VerdictOptions;
}

interface RawOptions {
  json: boolean;
  html?: string;
  urls?: string[];
  managementUrls?: string[];
  faultCmd?: string;
  restoreCmd?: string;
  checkpointCmd?: string;
  count: number;
  rate: number;
  fault: FaultKind | 'none';
  faultAt: number;
  hold: number;
  runs: number;
  /** false: --no-confirms. */
  confirms: ConfirmsSide | false;
  protocol: AnyProtocol | 'both';
  window: number;
  queue: string;
  queueType: QueueType;
  exchange?: string;
  vhost: string;
  size: number;
  confirmTimeout: number;
  heartbeat: number;
  maxStuck: number;
  latency?: number;
  jitter?: number;
  loss?: number;
  bandwidth?: string;
}

export const compare = defineCommand({
  name: 'compare',
  examples: ['compare -n 5000', 'compare --runs 5 --fault pause --hold 10s --json'],
  register: (command, dispatch: (o: CompareCliOptions) => Promise<void>) =>
    addVerdictOptions(
      addReportAndClusterOptions(
        command
          .summary('the main demo: confirms on vs off under a fault')
          .description('the main demo: confirms on vs off, each under a fault on the queue leader, every message counted')
          .addOption(countOption('messages per run', 20_000))
          .addOption(rateOption('messages per second; 0 = as fast as possible', 0))
          .addOption(
            new Option('--fault <kind>', 'fault applied to the leader (each one under Faults, below)').choices([...FAULT_KINDS, 'none']).default('kill'),
          )
          .addHelpText('after', ({ command, error }) => faultsHelpText(helpWidth(command, error)))
          .addOption(new Option('--fault-at <share>', 'share of the messages written before the fault: 0.3 or 30%').argParser(share).default(0.3))
          .addOption(latencyOption())
          .addOption(jitterOption())
          .addOption(lossOption())
          .addOption(bandwidthOption())
          .addOption(durationOption('--hold <duration>', 'keep the leader faulted at least this long').default(0, '0: once the new leader is seen'))
          .addOption(runsOption('repeat each mode K times (one run’s loss depends on timing)'))
          .addOption(confirmsSideOption())
          .option('--no-confirms', 'the same as --confirms off')
          .addOption(
            protocolOption(
              'amqp10: AMQP 1.0 outcomes vs pre-settled; stream: the native stream protocol, confirmed and deduplicated (--queue-type stream); both: the four AMQP sides',
              [...PUBLISH_PROTOCOLS, 'both'],
            ),
          )
          .addOption(windowOption('confirms on: async window'))
          .addOption(queueOption('the queue; messages are routed to it with its name as routing key'))
          .addOption(
            queueTypeOption(
              'compare',
              'quorum, mirrored (a classic queue with ha-mode all, RabbitMQ 3.x), classic or stream (declared afresh for each run, read from its first message); without --queue, compare declares rmq-bench.compare.<type> and deletes it after',
            ),
          )
          .option('--exchange <name>', "exchange to publish to (default: demo.orders for demo.orders, else the default exchange '')")
          .addOption(vhostOption())
          .addOption(sizeOption())
          .addOption(timeoutOption('--confirm-timeout <duration>', 'confirms on: a confirm not received within this is indeterminate', '5s'))
          .addOption(heartbeatOption())
          .addOption(
            durationOption(
              '--max-stuck <duration>',
              'after the fault, how long a message may stay unacknowledged for a consumer that no live channel has; past it the verdict fails, naming the queue',
            ).default(DEFAULT_MAX_STUCK_MS, formatDuration(DEFAULT_MAX_STUCK_MS)),
          )
          .addOption(checkpointCmdOption('before each run drains the queue (the producer done, the fault healed)')),
      ),
      'compare',
    ).action((raw: RawOptions, command: Command) => {
      const o = { ...raw, confirms: raw.confirms === false ? 'off' : raw.confirms } as const;
      const given = givenOptions(command);
      if (o.fault === 'none') refuseWith(given, ['--fault-at', '--hold'], 'does nothing with --fault none');
      if (o.confirms === 'off') refuseWith(given, ['--window', '--confirm-timeout'], 'does nothing with --confirms off');
      const typeProblem = faultProblem(o.queueType, o.fault);
      if (typeProblem) throw new UsageError(typeProblem);
      refuseForProtocol(o, given);
      if (o.queueType === 'stream') refuseWith(given, ['--max-stuck'], 'does nothing with --queue-type stream (a stream keeps no delivery unacknowledged)');
      if (o.maxStuck < STATS_LAG_MS)
        throw new UsageError(
          `--max-stuck ${formatDuration(o.maxStuck)} is shorter than the management API's figures can lag (${formatDuration(STATS_LAG_MS)}): give at least that`,
        );
      const modes = compareModes(o.protocol, o.confirms);
      const how = `--runs ${o.runs} of ${modes.length} side${modes.length === 1 ? '' : 's'}`;
      const once = oneShotProblem(o.fault, o.runs * modes.length, how, 'once: --runs 1 --confirms on');
      if (once) throw new UsageError(once);
      // A queue type other than quorum without --queue: compare's own queue of that type.
      const ownQueue = o.queueType !== 'quorum' && !given.has('queue');
      const queue = ownQueue ? ownQueueName('compare', o.queueType) : o.queue;
      return dispatch({
        json: o.json,
        html: o.html,
        queue,
        queueType: o.queueType,
        ownQueue,
        exchange: o.exchange ?? (queue === 'demo.orders' ? 'demo.orders' : ''),
        vhost: o.vhost,
        count: o.count,
        ratePerSec: o.rate,
        sizeBytes: o.size,
        window: o.window,
        confirmTimeoutMs: o.confirmTimeout,
        heartbeatS: heartbeatSeconds(o.heartbeat),
        fault: checkedFault(o.fault, o.faultCmd, o.restoreCmd),
        faultAt: o.faultAt,
        netem: netemFrom(o.fault, o),
        bandwidth: bandwidthFrom([o.fault], o.bandwidth),
        restoreAfterMs: o.hold,
        runs: o.runs,
        modes,
        // A mirrored queue's master is replaced once its peers see it down: after 45 to 75 s of a
        // partition (net_ticktime 60 s), where a quorum queue elects within about 10 s.
        electionTimeoutMs: o.queueType === 'mirrored' ? 150_000 : 60_000,
        rejoinTimeoutMs: 180_000,
        drainIdleMs: 2_000,
        reconnectTimeoutMs: faultPatienceMs(o.hold),
        maxStuckMs: o.maxStuck,
        urls: o.urls,
        managementUrls: o.managementUrls,
        faultCmd: o.faultCmd,
        restoreCmd: o.restoreCmd,
        checkpointCmd: o.checkpointCmd,
        verdict: verdictOptions(o, 'compare'),
      });
    }),
  overrides: async (o, config) => ({ ...(await otherClusterOverride(o, config)), ...checkpointOverride(o.checkpointCmd) }),
  async run(ctx, o) {
    const { json, html, managementUrls: _m, faultCmd: _f, restoreCmd: _r, checkpointCmd: _c, verdict, ...rest } = o;
    const { runCompare } = await import('../../scenarios/under-faults/compare.js');
    const r = await runCompare(ctx, { ...rest, routingKey: rest.queue });
    const ok = await emitVerdict({ json, html, broker: await ctx.broker() }, verdict, 'compare', r);
    if (r.interrupted) throw new InterruptedError('interrupted: the figures above are what was measured until Ctrl+C');
    return { ok };
  },
});

/** A protocol that publishes to one queue type only, always confirmed, or without some flags: what does not go with it is refused with one line. */
function refuseForProtocol(o: RawOptions & { confirms: ConfirmsSide }, given: ReadonlySet<string>): void {
  if (o.protocol === 'both') return;
  const problem = queueTypeProblem(o.protocol, o.queueType) ?? (o.confirms === 'off' ? confirmsOffProblem(o.protocol) : undefined);
  if (problem) throw new UsageError(problem);
  for (const [flag, why] of Object.entries(traitsOf(o.protocol).refusesFlags)) refuseWith(given, [flag], `does not go with --protocol ${o.protocol}: ${why}`);
}
