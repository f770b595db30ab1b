import { type Command, Option } from 'commander';
import { FAULT_KINDS, type FaultKind, faultProblem } from '../../faults/kinds.js';
import type { NetemSpec } from '../../faults/net/netem.js';
import { ownQueueName, type QueueType } from '../../cluster/broker/queue-types.js';
import { UsageError } from '../../errors.js';
import { defineCommand } from '../command.js';
import { addVerdictOptions, emitVerdict, type VerdictOptions, verdictOptions } from '../verdict-options.js';
import { faultsHelpText, helpWidth } from '../help.js';
import {
  durationOption,
  givenOptions,
  htmlOption,
  refuseWith,
  timeoutOption,
  jsonOption,
  jitterOption,
  bandwidthFrom,
  bandwidthOption,
  latencyOption,
  lossOption,
  netemFrom,
  queueOption,
  queueTypeOption,
  vhostOption,
} from '../options.js';

/** `rmq-bench failover`: fault the queue leader, measure the election, restore the node. */
interface FailoverCliOptions {
  json: boolean;
  /** --html: also write a self-contained HTML report here. */
  html: string | undefined;
  queue: string;
  queueType: QueueType;
  ownQueue: boolean;
  vhost: string;
  fault: FaultKind;
  /** null with --no-restore. */
  restoreAfterMs: number | null;
  electionTimeoutMs: number;
  rejoinTimeoutMs: number;
  netem: NetemSpec | undefined;
  bandwidth: string | undefined;
  /** --max-election. */
  verdict: VerdictOptions;
}

interface RawOptions {
  json: boolean;
  html?: string;
  queue: string;
  queueType: QueueType;
  vhost: string;
  fault: FaultKind;
  hold?: number;
  restore: boolean;
  electionTimeout?: number;
  rejoinTimeout: number;
  latency?: number;
  jitter?: number;
  loss?: number;
  bandwidth?: string;
}

export const failover = defineCommand({
  name: 'failover',
  examples: [
    'failover --fault pause --hold 10s',
    'failover --fault slow-link --bandwidth 256kbit --hold 20s',
    'failover --fault latency --latency 300ms --loss 1% --json',
  ],
  register: (command, dispatch: (o: FailoverCliOptions) => Promise<void>) =>
    addVerdictOptions(
      command
        .summary("fault the queue's leader, time the election")
        .description("fault the queue's leader node, measure the election, restore the node and wait until it is back")
        .addOption(queueOption('the queue whose leader is faulted'))
        .addOption(
          queueTypeOption(
            'failover',
            'quorum, mirrored (a classic queue with ha-mode all, RabbitMQ 3.x: its master is faulted), classic or stream (its writer is faulted); without --queue, failover declares rmq-bench.failover.<type> and deletes it after',
          ),
        )
        .addOption(vhostOption())
        .addOption(new Option('--fault <kind>', 'the fault applied to the leader (each one under Faults, below)').choices(FAULT_KINDS).default('kill'))
        .addOption(
          durationOption('--hold <duration>', 'keep the node faulted at least this long (default: restore once the new leader is seen)').conflicts('restore'),
        )
        .addOption(latencyOption())
        .addOption(jitterOption())
        .addOption(lossOption())
        .addOption(bandwidthOption())
        .option('--no-restore', 'leave the node faulted (the article’s failover.sh does; rmq-bench restores by default)')
        .addOption(timeoutOption('--election-timeout <duration>', 'deadline for a new leader (default: 60s; 150s for --queue-type mirrored)'))
        .addOption(timeoutOption('--rejoin-timeout <duration>', 'deadline for the node to be back after the restore', '3m'))
        .addOption(jsonOption())
        .addOption(htmlOption()),
      'failover',
    )
      .addHelpText('after', ({ command, error }) => faultsHelpText(helpWidth(command, error)))
      .action((o: RawOptions, command: Command) => {
        const given = givenOptions(command);
        if (!o.restore) refuseWith(given, ['--rejoin-timeout'], 'does nothing with --no-restore (the node is left faulted)');
        const typeProblem = faultProblem(o.queueType, o.fault);
        if (typeProblem) throw new UsageError(typeProblem);
        const ownQueue = o.queueType !== 'quorum' && !given.has('queue');
        return dispatch({
          json: o.json,
          html: o.html,
          queue: ownQueue ? ownQueueName('failover', o.queueType) : o.queue,
          queueType: o.queueType,
          ownQueue,
          vhost: o.vhost,
          fault: o.fault,
          restoreAfterMs: o.restore ? (o.hold ?? 0) : null,
          // A mirrored queue's master is replaced once its peers see it down: 45 to 75 s into a partition (net_ticktime 60 s).
          electionTimeoutMs: o.electionTimeout ?? (o.queueType === 'mirrored' ? 150_000 : 60_000),
          rejoinTimeoutMs: o.rejoinTimeout,
          netem: netemFrom(o.fault, o),
          bandwidth: bandwidthFrom([o.fault], o.bandwidth),
          verdict: verdictOptions(o, 'failover'),
        });
      }),
  async run(ctx, o) {
    const { requireCluster } = await import('../../cluster/lifecycle/readiness.js');
    const { runFailover } = await import('../../scenarios/under-faults/failover.js');
    await requireCluster(ctx);
    const r = await runFailover(ctx, o);
    // No verdict of its own: with --max-election, the threshold's.
    return { ok: await emitVerdict({ json: o.json, html: o.html, broker: await ctx.broker() }, o.verdict, 'failover', r) };
  },
});
