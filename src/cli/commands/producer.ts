import { type Command, InvalidArgumentError, Option } from 'commander';
import type { OutboxProducerResult } from '../../amqp/outbox-producer.js';
import type { PublisherResult, PublishMode } from '../../amqp/publisher.js';
import type { Context } from '../../context.js';
import { BrokerUnavailableError, InterruptedError, UsageError } from '../../errors.js';
import type { LedgerDocument } from '../../ledger/ledger.js';
import { maskUrl } from '../../url.js';
import { defineCommand } from '../command.js';
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
 * every one (the ledger; --report writes it for `verify`). With --outbox, the events go to a
 * SQLite outbox first and a relay publishes them. Hidden harness options serve producer-crash,
 * which runs this command as a child and SIGKILLs it.
 */
export interface ProducerCliOptions {
  json: boolean;
  /** --html: also write a self-contained HTML report here. */
  html: string | undefined;
  count: number;
  /** undefined: the cluster's three AMQP ports with user demo. */
  urls: string[] | undefined;
  queue: string;
  exchange: string;
  routingKey: string;
  ratePerSec: number;
  mode: PublishMode;
  window: number;
  batchSize: number;
  mandatory: boolean;
  persistent: boolean;
  sizeBytes: number;
  confirmTimeoutMs: number;
  heartbeatS: number;
  reconnectTimeoutMs: number;
  /** How long the broker may block the connection (a resource alarm) before the run gives up. */
  blockedTimeoutMs: number;
  /** At the end: how long to wait for the broker to have read every publish. */
  flushTimeoutMs: number;
  reportFile: string | undefined;
  /** --outbox: each event goes to this SQLite outbox first; a relay publishes it (issue #8). Absent without it. */
  outboxFile?: string;
  /** Hidden options for producer-crash, which runs the producer as a child. Absent when none is given. */
  harness?: ProducerHarness;
}

export interface ProducerHarness {
  /** The message ids' run (outbox: used when the file is created). */
  runId: string | undefined;
  /** First sequence to publish: a naive restart. */
  startAt: number;
  /** Print `sent <n>` on stdout every this many messages. */
  printSentEvery: number | undefined;
  /** Print `at <n>` on stdout as the run advances. */
  progressLines: boolean;
}

/** What --report writes and `rmq-bench verify` reads. */
export interface ProducerReport {
  schemaVersion: number;
  kind: 'producer-report';
  queue: string;
  exchange: string;
  routingKey: string;
  urls: string[];
  result: PublisherResult;
  ledger: LedgerDocument;
}

interface RawOptions {
  json: boolean;
  html?: string;
  count: number;
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
  report?: string;
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
export function producerOptions(o: RawOptions, given: ReadonlySet<string> = new Set()): ProducerCliOptions {
  if (o.outbox !== undefined) {
    if (o.tx || !o.confirms || o.confirmMode !== 'async')
      throw new UsageError('--outbox publishes with async confirms: it cannot be combined with --tx, --confirms=false or --confirm-mode');
    if (o.report !== undefined) throw new UsageError('--outbox keeps its record in the outbox file: --report is not supported with it');
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
  if (o.startAt !== undefined && o.startAt >= o.count) throw new UsageError(`--start-at ${o.startAt} is not below -n ${o.count}`);
  const harness = o.runId !== undefined || o.startAt !== undefined || o.printSent !== undefined || o.progressLines === true;
  return {
    json: o.json,
    html: o.html,
    count: o.count,
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
    reportFile: o.report,
    ...(o.outbox === undefined ? {} : { outboxFile: o.outbox }),
    ...(harness ? { harness: { runId: o.runId, startAt: o.startAt ?? 0, printSentEvery: o.printSent, progressLines: o.progressLines === true } } : {}),
  };
}

export const producer = defineCommand({
  name: 'producer',
  examples: ['producer -n 200 --confirms=false', 'producer -n 5000 --rate 0 --confirm-mode async --window 256 --report run.json'],
  register: (command, dispatch: (o: ProducerCliOptions) => Promise<void>) =>
    command
      .description('publish N messages with or without confirms, recording what happened to every one')
      .addOption(countOption('messages to publish', 100))
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
      .addOption(new Option('--report <file>', 'write the per-message ledger here, for `rmq-bench verify`').argParser(writableFile))
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
  run: (ctx, o) => (o.outboxFile === undefined ? publish(ctx, o) : publishWithOutbox(ctx, { ...o, outboxFile: o.outboxFile })),
});

async function publish(ctx: Context, o: ProducerCliOptions): Promise<void> {
  const { newRunId, runPublisher } = await import('../../amqp/publisher.js');
  const { Ledger } = await import('../../ledger/ledger.js');
  const { renderProducer } = await import('../../report/compare.js');
  const { SCHEMA_VERSION } = await import('../../report/json.js');
  const { emit, writeOutputs } = await import('../output.js');
  const urls = urlsOrDefault(o.urls, ctx.config);
  const runId = o.harness?.runId ?? newRunId();
  // producer-crash's naive mode: resume at --start-at, print `at`/`sent` lines for the parent.
  const startSeq = o.harness?.startAt ?? 0;
  const printLines = harnessPrinter(o.harness);
  const ledger = new Ledger({ runId, capacity: o.count });
  const { progress } = ctx;
  progress.start(`publishing ${o.count} messages to ${o.exchange} (${o.routingKey})`);
  let latest = { written: 0, lost: 0 };
  /** connection.blocked: its reason and since when (performance.now()); the status line says so, with the deadline. */
  let blocked: { reason: string; since: number } | undefined;
  const ticker = setInterval(
    () =>
      progress.update(
        blocked
          ? `blocked by the broker (${blocked.reason}: a resource alarm) for ${((performance.now() - blocked.since) / 1000).toFixed(0)} s of --blocked-timeout ${Math.round(o.blockedTimeoutMs / 1000)} s; published ${latest.written}/${o.count}`
          : `published ${latest.written}/${o.count}, connection losses ${latest.lost}`,
      ),
    250,
  );
  let result: PublisherResult;
  try {
    result = await runPublisher(
      {
        urls,
        startIndex: 0,
        exchange: o.exchange,
        routingKey: o.routingKey,
        count: o.count,
        ratePerSec: o.ratePerSec,
        sizeBytes: o.sizeBytes,
        persistent: o.persistent,
        mandatory: o.mandatory,
        mode: o.mode,
        window: o.window,
        batchSize: o.batchSize,
        confirmTimeoutMs: o.confirmTimeoutMs,
        heartbeatS: o.heartbeatS,
        reconnectTimeoutMs: o.reconnectTimeoutMs,
        blockedTimeoutMs: o.blockedTimeoutMs,
        flushTimeoutMs: o.flushTimeoutMs,
        runId,
        startSeq,
      },
      ledger,
      {
        signal: ctx.signal,
        onWritten: (n) => {
          latest = { ...latest, written: n };
          printLines?.(startSeq + n);
        },
        onEvent: (e) => {
          if (e.type === 'connection-lost') latest = { ...latest, lost: latest.lost + 1 };
          if (e.type === 'blocked') blocked = { reason: e.detail.replace(/^.*: /, ''), since: performance.now() };
          if (e.type === 'unblocked' || e.type === 'connection-lost') blocked = undefined;
          if (e.type !== 'connected' || latest.lost > 0) progress.info(`${(e.atMs / 1000).toFixed(2)} s ${e.type}: ${e.detail}`);
        },
      },
    );
  } finally {
    clearInterval(ticker);
    progress.stop();
  }
  const reportFile = o.reportFile;
  // Written after the result is printed: a write that fails costs the file, not the result (exit 74).
  const files: OutputFile[] =
    reportFile === undefined
      ? []
      : [
          {
            flag: '--report',
            path: reportFile,
            content: () => {
              const report: ProducerReport = {
                schemaVersion: SCHEMA_VERSION,
                kind: 'producer-report',
                queue: o.queue,
                exchange: o.exchange,
                routingKey: o.routingKey,
                urls: urls.map(maskUrl),
                result,
                ledger: ledger.toJSON(),
              };
              return JSON.stringify(report);
            },
          },
        ];
  const nothingHappened = result.gaveUp !== null && result.publishes === 0;
  if (!nothingHappened) emit(o, 'producer', { ...result, reportFile: reportFile ?? null }, renderProducer(result), files);
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
}

/**
 * The lines a parent process (producer-crash) reads on stdout: `at <n>` after every message
 * (where the run is), and with --print-sent `sent <n>` every so many messages (the naive
 * producer's own log: the number a restart resumes after). Written synchronously (a pipe
 * on Linux), so that what the parent has read is what the producer had printed when killed.
 */
export function harnessPrinter(
  h: ProducerHarness | undefined,
  write: (s: string) => void = (s) => process.stdout.write(s),
): ((position: number) => void) | undefined {
  if (!h || (!h.progressLines && h.printSentEvery === undefined)) return undefined;
  return (position) => {
    let out = h.progressLines ? `at ${position}\n` : '';
    if (h.printSentEvery !== undefined && position % h.printSentEvery === 0) out += `sent ${position - 1}\n`;
    if (out) write(out);
  };
}

/** `producer --outbox <file>`: the events go to the outbox first; a relay publishes them. */
async function publishWithOutbox(ctx: Context, o: ProducerCliOptions & { outboxFile: string }): Promise<void> {
  const { newRunId } = await import('../../amqp/publisher.js');
  const { runOutboxProducer } = await import('../../amqp/outbox-producer.js');
  const { openOutbox } = await import('../../store/outbox.js');
  const { renderOutboxProducer } = await import('../../report/producer-crash.js');
  const { emit } = await import('../output.js');
  const store = openOutbox(o.outboxFile, { create: { runId: o.harness?.runId ?? newRunId(), count: o.count } });
  const { progress } = ctx;
  const print = o.harness?.progressLines ? (n: number): void => void process.stdout.write(`at ${n}\n`) : undefined;
  try {
    const before = store.counts();
    print?.(before.published);
    progress.start(
      before.written > 0
        ? `resuming ${o.outboxFile}: ${before.written}/${o.count} events written, ${before.pending} pending`
        : `writing ${o.count} events to the outbox ${o.outboxFile}; the relay publishes them to ${o.exchange || '(default exchange)'} (${o.routingKey})`,
    );
    let published = before.published;
    let connections = 0;
    const ticker = setInterval(() => progress.update(`outbox: ${published}/${o.count} published`), 250);
    let r: OutboxProducerResult;
    try {
      r = await runOutboxProducer(
        store,
        {
          urls: urlsOrDefault(o.urls, ctx.config),
          startIndex: 0,
          exchange: o.exchange,
          routingKey: o.routingKey,
          ratePerSec: o.ratePerSec,
          sizeBytes: o.sizeBytes,
          persistent: o.persistent,
          mandatory: o.mandatory,
          window: o.window,
          confirmTimeoutMs: o.confirmTimeoutMs,
          heartbeatS: o.heartbeatS,
          reconnectTimeoutMs: o.reconnectTimeoutMs,
          blockedTimeoutMs: o.blockedTimeoutMs,
          flushTimeoutMs: o.flushTimeoutMs,
        },
        {
          signal: ctx.signal,
          onPublished: (n) => {
            published = n;
            print?.(n);
          },
          onEvent: (e) => {
            if (e.type === 'connected' && connections++ === 0) return;
            progress.info(`${(e.atMs / 1000).toFixed(2)} s ${e.type}: ${e.detail}`);
          },
        },
      );
    } finally {
      clearInterval(ticker);
      progress.stop();
    }
    emit(o, 'producer-outbox', r, renderOutboxProducer(r));
    if (r.interrupted) throw new InterruptedError('interrupted: the pending rows stay in the outbox; the same command resumes them');
    if (r.gaveUp !== null) {
      throw new BrokerUnavailableError(`the outbox relay gave up with ${r.atEnd.pending} rows pending: ${r.gaveUp}`, {
        hint: 'the outbox keeps them: the same command resumes',
      });
    }
  } finally {
    store.close();
  }
}
