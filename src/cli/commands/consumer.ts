import { type Command, Option } from 'commander';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { ConsumerHooks, ConsumerOptions } from '../../client/consumer-options.js';
import { ALL_FAILURE_ACTIONS, type FailureAction, type FailureAction10, type FailureSpec, failureActionRefusal } from '../../client/consumer-failures.js';
import { type Protocol, traitsOf } from '../../client/protocol.js';
import { BrokerUnavailableError, InterruptedError, UsageError } from '../../errors.js';
import type { ProcessedStore } from '../../store/processed.js';
import { defineCommand } from '../command.js';
import {
  countOption,
  durationOption,
  givenOptions,
  heartbeatOption,
  heartbeatSeconds,
  htmlOption,
  jsonOption,
  multiAckEveryOption,
  positiveInt,
  prefetchOption,
  protocolOption,
  queueOption,
  reconnectTimeoutOption,
  refuseWith,
  share,
  urlsOption,
  urlsOrDefault,
  writableFile,
  workOption,
} from '../options.js';

/** `rmq-bench consumer`: manual ack or autoack, prefetch, simulated work, failures and crashes; optionally idempotent. */
export interface ConsumerCliOptions extends Omit<ConsumerOptions, 'urls' | 'store' | 'random' | 'failure'> {
  json: boolean;
  protocol: Protocol;
  /** --on-failure's action is one of --protocol's (consumerOptions refuses the other's). */
  failure: FailureSpec<FailureAction | FailureAction10> | undefined;
  /** --html: also write a self-contained HTML report here. */
  html: string | undefined;
  /** undefined: the cluster's three AMQP ports with user demo. */
  urls: string[] | undefined;
  idempotent: boolean;
  storeFile: string | undefined;
}

interface RawOptions {
  json: boolean;
  html?: string;
  urls?: string[];
  protocol: Protocol;
  queue: string;
  prefetch: number;
  autoack: boolean;
  nack: boolean;
  onFailure?: FailureAction | FailureAction10;
  failEvery?: number;
  failRate?: number;
  failFirst?: number;
  work: number;
  multiAckEvery: number;
  count?: number;
  idleTimeout: number;
  idempotent: boolean;
  store?: string;
  heartbeat: number;
  reconnectTimeout: number;
}

/** --idempotent without --store: this file, in a folder of ours that the consumer creates (a folder you name must exist). */
const DEFAULT_STORE = '.rmq-bench/consumer.sqlite';

function consumerOptions(o: RawOptions, given: ReadonlySet<string>): ConsumerCliOptions {
  if (o.nack && o.autoack) throw new UsageError('--nack needs manual ack: with --autoack the broker has already forgotten the message');
  const refused = o.onFailure === undefined ? undefined : failureActionRefusal(o.protocol, o.onFailure);
  if (refused !== undefined) throw new UsageError(refused);
  // Over AMQP 1.0 --prefetch is the link credit, which bounds a pre-settled link too; without
  // it, a pre-settled link gets all the credit there is (0), as 0-9-1's autoack has no prefetch.
  const { prefetchBoundsAutoAck } = traitsOf(o.protocol);
  const unlimitedPreSettled = prefetchBoundsAutoAck && o.autoack && !given.has('prefetch');
  if (o.autoack)
    refuseWith(
      given,
      prefetchBoundsAutoAck ? ['--multi-ack-every'] : ['--prefetch', '--multi-ack-every'],
      'does nothing with --autoack (no acks: the broker does not wait for them)',
    );
  if (o.nack)
    refuseWith(
      given,
      ['--prefetch', '--multi-ack-every', '--on-failure'],
      'does nothing with --nack (it closes the connection at the first delivery, with prefetch 1)',
    );
  if ((o.failEvery !== undefined || o.failRate !== undefined || o.failFirst !== undefined) && o.onFailure === undefined) {
    throw new UsageError('--fail-every, --fail-rate and --fail-first need --on-failure');
  }
  return {
    json: o.json,
    html: o.html,
    urls: o.urls,
    protocol: o.protocol,
    queue: o.queue,
    prefetch: o.nack ? 1 : unlimitedPreSettled ? 0 : o.prefetch,
    autoAck: o.autoack,
    crashOnDelivery: o.nack,
    failure: o.onFailure
      ? { action: o.onFailure, every: o.failEvery, rate: o.failRate, ...(o.failFirst === undefined ? {} : { first: o.failFirst }) }
      : undefined,
    workMs: o.work,
    ackEvery: o.multiAckEvery,
    count: o.count,
    idleTimeoutMs: o.idleTimeout,
    idempotent: o.idempotent,
    storeFile: o.store ?? (o.idempotent ? DEFAULT_STORE : undefined),
    heartbeatS: heartbeatSeconds(o.heartbeat),
    reconnectTimeoutMs: o.reconnectTimeout,
  };
}

export const consumer = defineCommand({
  name: 'consumer',
  examples: ['consumer --nack', 'consumer --work 20ms --on-failure reject-requeue --fail-every 5'],
  register: (command, dispatch: (o: ConsumerCliOptions) => Promise<void>) =>
    command
      .summary('consume: ack modes, prefetch, failures, crashes')
      .description('consume with manual ack or autoack, prefetch, simulated work, failures and crashes; optionally idempotent')
      .addOption(urlsOption())
      .addOption(protocolOption('amqp10: AMQP 1.0, a receiver link whose credit is --prefetch; --autoack is a pre-settled link'))
      .addOption(queueOption('queue'))
      .addOption(
        prefetchOption(
          'unacked deliveries at most (0 = unlimited; manual ack only; amqp10: the link credit, also with --autoack, where it is unlimited unless given)',
          10,
        ),
      )
      .option('--autoack', 'the broker forgets a message as soon as it sends it', false)
      .option('--nack', "the article's crash: on every delivery, log its number and close the connection without acking (prefetch 1)", false)
      .addOption(
        new Option(
          '--on-failure <action>',
          'what a failing delivery does (amqp10: release, modify, modify-failed, modify-undeliverable, reject, close)',
        ).choices(ALL_FAILURE_ACTIONS),
      )
      .addOption(new Option('--fail-every <n>', 'fail every N-th delivery (with --on-failure)').argParser(positiveInt).conflicts('failRate'))
      .addOption(new Option('--fail-rate <p>', 'fail deliveries with probability p, 0.1 or 10% (with --on-failure)').argParser(share).conflicts('failFirst'))
      .addOption(new Option('--fail-first <n>', 'fail the first N deliveries, then succeed (with --on-failure)').argParser(positiveInt).conflicts('failEvery'))
      .addOption(workOption('0ms'))
      .addOption(multiAckEveryOption('manual ack: one multiple-ack every N messages', 1))
      .addOption(countOption('stop after N messages processed'))
      .addOption(durationOption('--idle-timeout <duration>', 'stop when nothing arrived for this long', '5s'))
      .option('--idempotent', 'record processed message ids (SQLite) in the same transaction as the work; skip and ack duplicates', false)
      .addOption(
        new Option('--store <file>', `the SQLite store of processed messages; its folder must exist (default: ${DEFAULT_STORE} with --idempotent)`).argParser(
          writableFile,
        ),
      )
      .addOption(heartbeatOption())
      .addOption(reconnectTimeoutOption())
      .addOption(jsonOption())
      .addOption(htmlOption())
      .action((o: RawOptions, command: Command) => dispatch(consumerOptions(o, givenOptions(command)))),
  async run(ctx, o) {
    const { requireProtocols } = await import('../require-protocol.js');
    await requireProtocols(ctx, [o.protocol], `--protocol ${o.protocol}`);
    const { renderConsumer, renderDelivery } = await import('../../report/kinds/consumer/text.js');
    const { emit } = await import('../output.js');
    let store: ProcessedStore | undefined;
    if (o.storeFile) {
      // Only our default's folder is created; a --store path was checked at parse time (its folder exists).
      if (o.storeFile === DEFAULT_STORE) await mkdir(path.dirname(path.resolve(o.storeFile)), { recursive: true });
      const { openProcessedStore } = await import('../../store/processed.js');
      store = openProcessedStore(o.storeFile, { idempotent: o.idempotent });
    }
    const { progress } = ctx;
    if (o.failure) progress.info(`on failure: ${o.failure.action}`);
    let shown = 0;
    try {
      const common = {
        urls: urlsOrDefault(o.urls, ctx.config),
        queue: o.queue,
        prefetch: o.prefetch,
        autoAck: o.autoAck,
        crashOnDelivery: o.crashOnDelivery,
        workMs: o.workMs,
        ackEvery: o.ackEvery,
        count: o.count,
        idleTimeoutMs: o.idleTimeoutMs,
        heartbeatS: o.heartbeatS,
        reconnectTimeoutMs: o.reconnectTimeoutMs,
        store,
      };
      const hooks: ConsumerHooks = {
        signal: ctx.signal,
        // Every failure, crash and duplicate; the first 20 successes, then every 1000th.
        onDelivery: (d) => {
          shown++;
          if (d.outcome !== 'processed' || shown <= 20 || shown % 1000 === 0) progress.info(renderDelivery(d));
        },
        onEvent: (line) => progress.info(line),
      };
      const { consumerFor } = await import('../../client/clients.js');
      const r = await consumerFor(o.protocol)({ ...common, failure: o.failure }, hooks);
      emit(
        { ...o, broker: await ctx.broker() },
        'consumer',
        { ...r, storeFile: o.storeFile ?? null, protocol: o.protocol },
        { text: renderConsumer(r, o.failure?.action, o.protocol) },
      );
      if (r.stoppedBecause === 'interrupted') throw new InterruptedError('interrupted: the figures above are what was measured until Ctrl+C');
      if (r.stoppedBecause === 'gave-up') throw new BrokerUnavailableError(`the consumer gave up: ${r.gaveUp ?? ''}`);
    } finally {
      store?.close();
    }
  },
});
