import { type Command, InvalidArgumentError, Option } from 'commander';
import type { Context } from '../../context.js';
import { BrokerUnavailableError, InterruptedError, UsageError } from '../../errors.js';
import type { ProducerOptions } from '../../scenarios/traffic/producer.js';
import type { Protocol } from '../../client/protocol.js';
import { defineCommand, type Verdict } from '../command.js';
import {
  booleanValue,
  countOption,
  durationOption,
  givenOptions,
  timeoutOption,
  heartbeatOption,
  heartbeatSeconds,
  htmlOption,
  jsonOption,
  nonNegativeInt,
  positiveInt,
  protocolOption,
  queueOption,
  refuseWith,
  rateOption,
  reconnectTimeoutOption,
  sizeOption,
  urlsOption,
  urlsOrDefault,
  writableFile,
  windowOption,
} from '../options.js';
import type { OutputFile } from '../output.js';

/**
 * `rmq-bench producer`: publish N messages with or without confirms, recording what happened to
 * every one (the ledger; --ledger writes it for `verify`). With --outbox, the events go to a
 * SQLite outbox first and a relay publishes them. Hidden harness options serve producer-crash,
 * which runs this command as a child and SIGKILLs it.
 */
export interface ProducerCliOptions extends Omit<ProducerOptions, 'urls'> {
  json: boolean;
  /** --html: also write a self-contained HTML report here. */
  html: string | undefined;
  /** undefined: the cluster's three AMQP ports with user demo. */
  urls: string[] | undefined;
  reportFile: string | undefined;
  /** --outbox: each event goes to this SQLite outbox first; a relay publishes it (issue #8). Absent without it. */
  outboxFile?: string;
}

interface RawOptions {
  json: boolean;
  html?: string;
  count: number;
  protocol: Protocol;
  confirms: boolean;
  confirmMode: 'sync' | 'batch' | 'async';
  window: number;
  batchSize: number;
  tx: boolean;
  urls?: string[];
  queue: string;
  exchange: string;
  routingKey?: string;
  rate: number;
  mandatory: boolean;
  persistent: boolean;
  size: number;
  confirmTimeout: number;
  heartbeat: number;
  reconnectTimeout: number;
  blockedTimeout: number;
  flushTimeout: number;
  ledger?: string;
  outbox?: string;
  runId?: string;
  startAt?: number;
  printSent?: number;
  progressLines?: boolean;
}

/** A run id for message ids `${runId}-${seq}`: letters and digits only. */
function runIdValue(value: string): string {
  if (!/^[A-Za-z0-9]{1,64}$/.test(value)) throw new InvalidArgumentError(`'${value}' is not a run id (1 to 64 letters and digits)`);
  return value;
}

/** Option combinations no parser can check, then the typed options. `given`: the options on the command line (not defaults). */
function producerOptions(o: RawOptions, given: ReadonlySet<string> = new Set()): ProducerCliOptions {
  if (o.outbox !== undefined) {
    if (o.tx || !o.confirms || o.confirmMode !== 'async')
      throw new UsageError('--outbox publishes with async confirms: it cannot be combined with --tx, --confirms=false or --confirm-mode');
    if (o.ledger !== undefined) throw new UsageError('--outbox keeps its record in the outbox file: --ledger is not supported with it');
    if (o.mandatory) throw new UsageError('--outbox does not handle basic.return: a returned row would be marked published; leave out --mandatory');
    if (o.startAt !== undefined) throw new UsageError('--outbox resumes from its pending rows: --start-at does not apply');
  }
  // A switch that makes another option meaningless: refused, not silently ignored.
  if (o.tx)
    refuseWith(given, ['--confirms', '--confirm-mode', '--window', '--confirm-timeout'], 'does nothing with --tx (AMQP transactions instead of confirms)');
  else if (!o.confirms)
    refuseWith(given, ['--confirm-mode', '--window', '--batch-size', '--confirm-timeout'], 'does nothing with --confirms=false (no confirms to wait for)');
  else {
    if (o.confirmMode !== 'async') refuseWith(given, ['--window'], `is for --confirm-mode async, not ${o.confirmMode}`);
    if (o.confirmMode !== 'batch') refuseWith(given, ['--batch-size'], `is for --confirm-mode batch and --tx, not --confirm-mode ${o.confirmMode}`);
  }
  PROTOCOL_REFUSALS[o.protocol](o, given);
  if (o.startAt !== undefined && o.startAt >= o.count) throw new UsageError(`--start-at ${o.startAt} is not below -n ${o.count}`);
  const harness = o.runId !== undefined || o.startAt !== undefined || o.printSent !== undefined || o.progressLines === true;
  return {
    json: o.json,
    html: o.html,
    count: o.count,
    protocol: o.protocol,
    urls: o.urls,
    queue: o.queue,
    exchange: o.exchange,
    routingKey: o.routingKey ?? o.queue,
    ratePerSec: o.rate,
    mode: o.tx ? 'tx' : o.confirms ? o.confirmMode : 'none',
    window: o.window,
    batchSize: o.batchSize,
    mandatory: o.mandatory,
    persistent: o.persistent,
    sizeBytes: o.size,
    confirmTimeoutMs: o.confirmTimeout,
    heartbeatS: heartbeatSeconds(o.heartbeat),
    reconnectTimeoutMs: o.reconnectTimeout,
    blockedTimeoutMs: o.blockedTimeout,
    flushTimeoutMs: o.flushTimeout,
    reportFile: o.ledger,
    ...(o.outbox === undefined ? {} : { outboxFile: o.outbox }),
    ...(harness ? { harness: { runId: o.runId, startAt: o.startAt ?? 0, printSentEvery: o.printSent, progressLines: o.progressLines === true } } : {}),
  };
}

/** What AMQP 1.0 has no form for: one line each. */
/** The options a protocol's producer has no use for: refused, not ignored. */
const PROTOCOL_REFUSALS = {
  amqp091: () => undefined,
  amqp10: amqp10Refusals,
} satisfies { [P in Protocol]: (o: RawOptions, given: ReadonlySet<string>) => void };

function amqp10Refusals(o: RawOptions, given: ReadonlySet<string>): void {
  if (o.tx) throw new UsageError('--tx is AMQP 0-9-1 (transactions); with --protocol amqp10 each transfer has its own outcome');
  if (o.outbox !== undefined) throw new UsageError('--outbox relays over AMQP 0-9-1; leave out --protocol amqp10');
  if (o.confirms && o.confirmMode === 'batch')
    throw new UsageError('--confirm-mode batch is AMQP 0-9-1; with --protocol amqp10 use async (up to --window unsettled) or sync');
  refuseWith(given, ['--mandatory'], 'does nothing with --protocol amqp10 (the broker always answers an unroutable transfer with released)');
  refuseWith(given, ['--batch-size'], 'is for --confirm-mode batch and --tx, which are AMQP 0-9-1');
}

export const producer = defineCommand({
  name: 'producer',
  examples: ['producer -n 200 --confirms=false', 'producer -n 5000 --rate 0 --window 256 --ledger run.json'],
  register: (command, dispatch: (o: ProducerCliOptions) => Promise<void>) =>
    command
      .summary('publish N messages, with or without confirms')
      .description('publish N messages with or without confirms, recording what happened to every one')
      .addOption(countOption('messages to publish', 100))
      .addOption(protocolOption('amqp10: AMQP 1.0, where confirms are outcomes (accepted, released, rejected) and --confirms=false sends pre-settled'))
      .addOption(new Option('--confirms [bool]', 'publisher confirms (--confirms=false or --no-confirms to turn off)').argParser(booleanValue).default(true))
      .option('--no-confirms', 'no publisher confirms: fire and forget')
      .addOption(
        new Option('--confirm-mode <mode>', 'sync: one at a time; batch: every --batch-size; async: up to --window outstanding')
          .choices(['sync', 'batch', 'async'])
          .default('async'),
      )
      .addOption(windowOption('async: outstanding confirms at most'))
      .addOption(new Option('--batch-size <n>', 'batch confirms / tx commit every N messages').argParser(positiveInt).default(100))
      .option('--tx', 'AMQP transactions instead of confirms (commit every --batch-size)', false)
      .addOption(urlsOption())
      .addOption(queueOption('queue (also the default routing key)'))
      .option('--exchange <name>', 'exchange', 'demo.orders')
      .option('--routing-key <key>', 'routing key (default: the queue name)')
      .addOption(rateOption('messages per second; 0 = as fast as possible (the article sleeps 50 ms: 20/s)', 20))
      .option('--mandatory', 'mandatory flag: an unroutable message comes back (basic.return) and never counts as safe', false)
      .addOption(new Option('--persistent [bool]', 'delivery mode 2').argParser(booleanValue).default(true))
      .addOption(sizeOption())
      .addOption(timeoutOption('--confirm-timeout <duration>', 'a confirm not received within this is indeterminate', '5s'))
      .addOption(heartbeatOption('AMQP heartbeat, so a half-open connection is noticed'))
      .addOption(reconnectTimeoutOption())
      .addOption(
        durationOption(
          '--blocked-timeout <duration>',
          'give up when the broker blocks the connection (a memory or disk alarm) for this long; what is unconfirmed is indeterminate',
          '60s',
        ),
      )
      .addOption(
        durationOption('--flush-timeout <duration>', 'at the end (or on Ctrl+C/SIGTERM): how long to wait for the broker to read what was written', '15s'),
      )
      .addOption(new Option('--ledger <file>', 'write the per-message ledger here, for `rmq-bench verify`').argParser(writableFile))
      .addOption(
        new Option(
          '--outbox <file>',
          'outbox pattern: write each event to this SQLite outbox first, publish the pending rows with confirms, mark them on the confirm; the same file resumes after a crash (its folder must exist)',
        ).argParser(writableFile),
      )
      .addOption(new Option('--run-id <id>', "producer-crash: the message ids' run").argParser(runIdValue).hideHelp())
      .addOption(new Option('--start-at <seq>', 'producer-crash: first sequence to publish (a naive restart)').argParser(nonNegativeInt).hideHelp())
      .addOption(new Option('--print-sent <n>', 'producer-crash: print `sent <n>` on stdout every N messages').argParser(positiveInt).hideHelp())
      .addOption(new Option('--progress-lines', 'producer-crash: print `at <n>` on stdout as the run advances').hideHelp())
      .addOption(jsonOption())
      .addOption(htmlOption())
      .action((o: RawOptions, command: Command) => dispatch(producerOptions(o, givenOptions(command)))),
  async run(ctx, o) {
    const { requireProtocols } = await import('../require-protocol.js');
    await requireProtocols(ctx, [o.protocol], `--protocol ${o.protocol}`);
    return o.outboxFile === undefined ? publish(ctx, o) : publishWithOutbox(ctx, { ...o, outboxFile: o.outboxFile });
  },
});

/**
 * Plain mode: publish, print the result, write --ledger; then the exit code's error, if any, or
 * the verdict: failed (exit 1) when the broker kept refusing messages until they were given up
 * (the result says how many), passed otherwise.
 */
async function publish(ctx: Context, o: ProducerCliOptions): Promise<Verdict> {
  const { runProducer } = await import('../../scenarios/traffic/producer.js');
  const { emit, writeOutputs } = await import('../output.js');
  const { json: _j, html: _h, reportFile, outboxFile: _o, urls, ...rest } = o;
  const { result, report } = await runProducer(ctx, { ...rest, urls: urlsOrDefault(urls, ctx.config) });
  // Written after the result is printed: a write that fails costs the file, not the result (exit 74).
  const files: OutputFile[] = reportFile === undefined ? [] : [{ flag: '--ledger', path: reportFile, content: () => JSON.stringify(report()) }];
  const nothingHappened = result.gaveUp !== null && result.publishes === 0;
  if (!nothingHappened) emit({ ...o, broker: await ctx.broker() }, 'producer', { ...result, reportFile: reportFile ?? null }, { files });
  else writeOutputs(files);
  if (result.interrupted) throw new InterruptedError('interrupted: the figures above are what was measured until Ctrl+C');
  if (result.gaveUp !== null) {
    throw new BrokerUnavailableError(`the producer gave up after ${result.written} of ${o.count} messages: ${result.gaveUp}`, {
      ...(o.reportFile ? { hint: `what happened so far is in ${o.reportFile}` } : {}),
    });
  }
  if (result.flush !== undefined && result.flush.channel !== 'closed') {
    throw new BrokerUnavailableError(
      `the broker had not read everything written when the producer closed (--flush-timeout ${o.flushTimeoutMs} ms${result.flush.blockedBy ? `; blocked: ${result.flush.blockedBy}` : ''})`,
    );
  }
  return { ok: result.refusedGivenUp === 0 };
}

/** `producer --outbox <file>`: the events go to the outbox first; a relay publishes them. */
async function publishWithOutbox(ctx: Context, o: ProducerCliOptions & { outboxFile: string }): Promise<void> {
  const { runProducerOutbox } = await import('../../scenarios/traffic/producer-outbox.js');
  const { emit } = await import('../output.js');
  const { json: _j, html: _h, reportFile: _r, queue: _q, mode: _m, batchSize: _b, urls, ...rest } = o;
  const r = await runProducerOutbox(ctx, { ...rest, urls: urlsOrDefault(urls, ctx.config) });
  emit({ ...o, broker: await ctx.broker() }, 'producer-outbox', r);
  if (r.interrupted) throw new InterruptedError('interrupted: the pending rows stay in the outbox; the same command resumes them');
  if (r.gaveUp !== null) {
    throw new BrokerUnavailableError(`the outbox relay gave up with ${r.atEnd.pending} rows pending: ${r.gaveUp}`, {
      hint: 'the outbox keeps them: the same command resumes',
    });
  }
}
