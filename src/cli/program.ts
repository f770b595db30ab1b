import { Command, InvalidArgumentError, Option } from 'commander';
import { createRequire } from 'node:module';
import { FAULT_KINDS, type FaultKind } from '../cluster/faults.js';
import type { PublishMode } from '../amqp/publisher.js';
import { FAILURE_ACTIONS, type ConsumerOptions, type FailureAction } from '../amqp/consumer.js';
import { UsageError } from '../errors.js';
import { parseUrls } from '../amqp/connect.js';
import type { CompareMode, CompareOptions } from '../scenarios/compare.js';
import { CRASH_MODES, type ConsumerCrashOptions, type CrashMode } from '../scenarios/consumer-crash.js';
import type { PrefetchDemoOptions } from '../scenarios/prefetch-demo.js';
import { DLQ_REASONS, type DlqDemoOptions, type DlqReason } from '../scenarios/dlq-demo.js';
import type { RetryDemoOptions } from '../scenarios/retry-demo.js';
import { RESTART_HOW, type DurabilityDemoOptions, type RestartHow } from '../scenarios/durability-demo.js';
import { DELAYED_RETRY_TYPES, DELAYED_RETRY_VIA, type DelayedRetryDemoOptions, type DelayedRetryType, type DelayedRetryVia } from '../scenarios/delayed-retry-demo.js';
import type { ReplayOptions } from '../scenarios/dlq-tools.js';
import { heartbeatSeconds, maskCredentialsLoosely } from './options.js';
import { registerAudit, type AuditInvocation } from './program-audit.js';
import { registerBench, type BenchInvocation } from './program-bench.js';
import { registerWatch, type WatchInvocation } from './program-watch.js';
import { registerProducerCrash, type ProducerCrashInvocation } from './program-producer-crash.js';
import { booleanValue, durationList, htmlOption, httpUrlList, durationMs, millisOrDuration, positiveNumber, nodeName, nonNegativeInt, positiveInt, prefetchCount, share } from './options.js';

/** argv → one typed invocation. No side effects: main.ts dispatches it. */
export type Invocation =
  | { command: 'cluster up'; options: { json: boolean; timeoutMs: number } }
  | { command: 'cluster down'; options: { json: boolean; volumes: boolean } }
  | { command: 'cluster reset'; options: { json: boolean; hard: boolean; timeoutMs: number } }
  | { command: 'cluster status'; options: { json: boolean } }
  | { command: 'cluster logs'; options: { node: string | undefined; follow: boolean; tail: number | undefined } }
  | { command: 'cluster image'; options: { json: boolean; rebuild: boolean } }
  | { command: 'failover'; options: FailoverCliOptions }
  | { command: 'producer'; options: ProducerCliOptions }
  | { command: 'verify'; options: VerifyCliOptions }
  | { command: 'compare'; options: CompareCliOptions }
  | { command: 'consumer'; options: ConsumerCliOptions }
  | { command: 'consumer-crash'; options: ConsumerCrashOptions & { json: boolean; html: string | undefined } }
  | { command: 'prefetch-demo'; options: PrefetchDemoOptions & { json: boolean; html: string | undefined } }
  | { command: 'dlq-demo'; options: DlqDemoOptions & { json: boolean; html: string | undefined; auto: boolean } }
  | { command: 'retry-demo'; options: RetryDemoOptions & { json: boolean; html: string | undefined; auto: boolean; ladder: { backoffMs: number[]; timeScale: number } | undefined } }
  | { command: 'durability-demo'; options: DurabilityDemoOptions & { json: boolean; html: string | undefined; auto: boolean } }
  | { command: 'delayed-retry-demo'; options: DelayedRetryDemoOptions & { json: boolean; html: string | undefined; auto: boolean } }
  | { command: 'dlq inspect'; options: { json: boolean; queue: string; limit: number } }
  | { command: 'dlq replay'; options: ReplayOptions & { json: boolean } }
  | BenchInvocation
  | AuditInvocation
  | WatchInvocation
  | ProducerCrashInvocation;

export interface FailoverCliOptions {
  json: boolean;
  queue: string;
  vhost: string;
  fault: FaultKind;
  /** null with --no-restore. */
  restoreAfterMs: number | null;
  electionTimeoutMs: number;
  rejoinTimeoutMs: number;
}

export interface ProducerCliOptions {
  json: boolean;
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

export interface ConsumerCliOptions extends Omit<ConsumerOptions, 'urls' | 'store' | 'random'> {
  json: boolean;
  /** undefined: the cluster's three AMQP ports with user demo. */
  urls: string[] | undefined;
  idempotent: boolean;
  storeFile: string | undefined;
}

export interface VerifyCliOptions {
  json: boolean;
  reportFile: string;
  queue: string | undefined;
  urls: string[] | undefined;
  idleMs: number;
}

export interface CompareCliOptions extends Omit<CompareOptions, 'routingKey'> {
  json: boolean;
  /** --html: also write a self-contained HTML report here. */
  html: string | undefined;
  /** A cluster that is not ours: its management API... */
  managementUrls: string[] | undefined;
  /** ...and how to fault (and restore) one of its nodes: '{node}', '{host}', '{fault}' are filled in. */
  faultCmd: string | undefined;
  restoreCmd: string | undefined;
}

export type Dispatch = (invocation: Invocation) => Promise<void>;

const require = createRequire(import.meta.url);
const { version } = require('../../package.json') as { version: string };

/** dlq-demo --reason: a comma-separated list of reasons, or all (in the demo's order). */
function dlqReasons(value: string): DlqReason[] {
  const parts = value.split(',').map((x) => x.trim());
  if (parts.includes('all')) return [...DLQ_REASONS];
  for (const p of parts) {
    if (!(DLQ_REASONS as readonly string[]).includes(p)) throw new InvalidArgumentError(`'${p}' is not one of ${DLQ_REASONS.join(', ')}, all`);
  }
  return DLQ_REASONS.filter((r) => parts.includes(r));
}

const jsonOption = (): Option => new Option('--json', 'print one JSON document on stdout (people-facing output stays on stderr)').default(false);

function prefetchList(value: string): number[] {
  const list = value.split(',').map((v) => v.trim()).filter(Boolean);
  if (list.length === 0) throw new InvalidArgumentError('no prefetch value given');
  return list.map(prefetchCount);
}

/** A run id for message ids `${runId}-${seq}`: letters and digits only. */
function runIdValue(value: string): string {
  if (!/^[A-Za-z0-9]{1,64}$/.test(value)) throw new InvalidArgumentError(`'${value}' is not a run id (1 to 64 letters and digits)`);
  return value;
}

function crashModes(value: string): CrashMode[] {
  const list = value.split(',').map((v) => v.trim()).filter(Boolean);
  for (const m of list) {
    if (!(CRASH_MODES as readonly string[]).includes(m)) throw new InvalidArgumentError(`'${m}' is not one of ${CRASH_MODES.join(', ')}`);
  }
  if (list.length === 0) throw new InvalidArgumentError('no mode given');
  return list as CrashMode[];
}

/** --fault-cmd needs a fault to apply; --restore-cmd needs --fault-cmd. */
function checkedFault(fault: FaultKind | 'none', faultCmd: string | undefined, restoreCmd: string | undefined): FaultKind | 'none' {
  if (restoreCmd !== undefined && faultCmd === undefined) throw new UsageError('--restore-cmd needs --fault-cmd');
  if (faultCmd !== undefined && fault === 'none') throw new UsageError('--fault-cmd with --fault none applies nothing');
  return fault;
}

export function createProgram(dispatch: Dispatch): Command {
  const program = new Command('rmq-bench')
    .description('Shows, with numbers from a real 3-node RabbitMQ cluster, where messages get lost and what prevents it.')
    .version(version, '-V, --version')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => process.stdout.write(s),
      writeErr: (s) => process.stderr.write(s),
      // commander quotes a rejected argument as typed: mask anything shaped like user:password@.
      outputError: (s, write) => write(maskCredentialsLoosely(s)),
    });

  const cluster = program
    .command('cluster')
    .description('the 3-node RabbitMQ 4.3 quorum cluster (docker compose): up, down, reset, status, logs, image')
    .exitOverride();

  cluster
    .command('up')
    .description('start rabbit1..3 and wait until they form one cluster with the definitions loaded (idempotent)')
    .addOption(new Option('--timeout <duration>', 'deadline for the nodes to be healthy and clustered').argParser(durationMs).default(180_000, '3m'))
    .addOption(jsonOption())
    .action((o: { json: boolean; timeout: number }) => dispatch({ command: 'cluster up', options: { json: o.json, timeoutMs: o.timeout } }));

  cluster
    .command('down')
    .description('stop and remove the containers')
    .option('--volumes', 'also remove the nodes’ data volumes', false)
    .addOption(jsonOption())
    .action((o: { json: boolean; volumes: boolean }) => dispatch({ command: 'cluster down', options: o }));

  cluster
    .command('reset')
    .description('a clean state for an isolated demo: delete undeclared queues, exchanges and policies, purge the declared queues, re-apply the definitions')
    .option('--hard', 'instead: remove the containers and their volumes and start afresh', false)
    .addOption(new Option('--timeout <duration>', 'deadline for the cluster to be ready again').argParser(durationMs).default(180_000, '3m'))
    .addOption(jsonOption())
    .action((o: { json: boolean; hard: boolean; timeout: number }) =>
      dispatch({ command: 'cluster reset', options: { json: o.json, hard: o.hard, timeoutMs: o.timeout } }),
    );

  cluster
    .command('status')
    .description('per node: container state, version, alarms; per quorum queue: leader, members, online members')
    .addOption(jsonOption())
    .action((o: { json: boolean }) => dispatch({ command: 'cluster status', options: o }));

  cluster
    .command('logs')
    .description('the nodes’ logs (compose logs)')
    .argument('[node]', 'rabbit1, rabbit2 or rabbit3 (default: all)', nodeName)
    .option('-f, --follow', 'keep following', false)
    .option('--tail <lines>', 'only the last lines of each log', positiveInt)
    .action((node: string | undefined, o: { follow: boolean; tail?: number }) =>
      dispatch({ command: 'cluster logs', options: { node, follow: o.follow, tail: o.tail } }),
    );

  cluster
    .command('image')
    .description('make sure the RabbitMQ image exists: pull it, or build it from Debian packages when offline')
    .option('--rebuild', 'build rmq-bench/rabbitmq:4.3 from Debian packages even if it exists', false)
    .addOption(jsonOption())
    .action((o: { json: boolean; rebuild: boolean }) => dispatch({ command: 'cluster image', options: o }));

  program
    .command('failover')
    .description("fault the queue's leader node, measure the election, restore the node and wait until it is back")
    .option('--queue <name>', 'quorum queue whose leader is faulted', 'demo.orders')
    .option('--vhost <name>', 'virtual host', '/')
    .addOption(new Option('--fault <kind>', 'kill (SIGKILL), stop (clean shutdown), pause (freeze), disconnect (network)').choices(FAULT_KINDS).default('kill'))
    .addOption(
      new Option('--restore-after <duration>', 'keep the node faulted at least this long (default: restore once the new leader is seen)')
        .argParser(durationMs)
        .conflicts('restore'),
    )
    .option('--no-restore', 'leave the node faulted (the article’s failover.sh does; rmq-bench restores by default)')
    .addOption(new Option('--election-timeout <duration>', 'deadline for a new leader').argParser(durationMs).default(60_000, '60s'))
    .addOption(new Option('--rejoin-timeout <duration>', 'deadline for the node to be back after the restore').argParser(durationMs).default(180_000, '3m'))
    .addOption(jsonOption())
    .action(
      (o: { json: boolean; queue: string; vhost: string; fault: FaultKind; restoreAfter?: number; restore: boolean; electionTimeout: number; rejoinTimeout: number }) =>
        dispatch({
          command: 'failover',
          options: {
            json: o.json,
            queue: o.queue,
            vhost: o.vhost,
            fault: o.fault,
            restoreAfterMs: o.restore ? (o.restoreAfter ?? 0) : null,
            electionTimeoutMs: o.electionTimeout,
            rejoinTimeoutMs: o.rejoinTimeout,
          },
        }),
    );

  const urlsOption = (): Option =>
    new Option('--urls <list>', 'comma-separated AMQP URLs, tried in order on (re)connect (default: rabbit1..3 with user demo)').argParser((v) => {
      try {
        return parseUrls(v);
      } catch (err) {
        throw new InvalidArgumentError(err instanceof Error ? err.message.replace(/^--urls: /, '') : String(err));
      }
    });

  program
    .command('producer')
    .description('publish N messages with or without confirms, recording what happened to every one')
    .addOption(new Option('-n, --count <n>', 'messages to publish').argParser(positiveInt).default(100))
    .addOption(new Option('--confirms [bool]', 'publisher confirms (--confirms=false or --no-confirms to turn off)').argParser(booleanValue).default(true))
    .option('--no-confirms', 'no publisher confirms: fire and forget')
    .addOption(new Option('--confirm-mode <mode>', 'sync: one at a time; batch: every --batch-size; async: up to --window outstanding').choices(['sync', 'batch', 'async']).default('async'))
    .addOption(new Option('--window <n>', 'async: outstanding confirms at most').argParser(positiveInt).default(256))
    .addOption(new Option('--batch-size <n>', 'batch confirms / tx commit every N messages').argParser(positiveInt).default(100))
    .option('--tx', 'AMQP transactions instead of confirms (commit every --batch-size)', false)
    .addOption(urlsOption())
    .option('--queue <name>', 'queue (also the default routing key)', 'demo.orders')
    .option('--exchange <name>', 'exchange', 'demo.orders')
    .option('--routing-key <key>', 'routing key (default: the queue name)')
    .addOption(new Option('-r, --rate <n>', 'messages per second; 0 = as fast as possible (the article sleeps 50 ms: 20/s)').argParser(nonNegativeInt).default(20))
    .option('--mandatory', 'mandatory flag: an unroutable message comes back (basic.return) and never counts as safe', false)
    .addOption(new Option('--persistent [bool]', 'delivery mode 2').argParser(booleanValue).default(true))
    .addOption(new Option('-s, --size <bytes>', 'message body size').argParser(nonNegativeInt).default(100))
    .addOption(new Option('--confirm-timeout <duration>', 'a confirm not received within this is indeterminate').argParser(durationMs).default(5_000, '5s'))
    .addOption(new Option('--heartbeat <duration>', 'AMQP heartbeat, so a half-open connection is noticed').argParser(durationMs).default(5_000, '5s'))
    .addOption(new Option('--reconnect-timeout <duration>', 'give up when no broker answers for this long').argParser(durationMs).default(60_000, '60s'))
    .option('--report <file>', 'write the per-message ledger here, for `rmq-bench verify`')
    .option('--outbox <file>', 'outbox pattern: write each event to this SQLite outbox first, publish the pending rows with confirms, mark them on the confirm; the same file resumes after a crash')
    .addOption(new Option('--run-id <id>', 'producer-crash: the message ids\' run').argParser(runIdValue).hideHelp())
    .addOption(new Option('--start-at <seq>', 'producer-crash: first sequence to publish (a naive restart)').argParser(nonNegativeInt).hideHelp())
    .addOption(new Option('--print-sent <n>', 'producer-crash: print `sent <n>` on stdout every N messages').argParser(positiveInt).hideHelp())
    .addOption(new Option('--progress-lines', 'producer-crash: print `at <n>` on stdout as the run advances').hideHelp())
    .addOption(jsonOption())
    .action(
      (o: {
        json: boolean; count: number; confirms: boolean; confirmMode: 'sync' | 'batch' | 'async'; window: number; batchSize: number; tx: boolean;
        urls?: string[]; queue: string; exchange: string; routingKey?: string; rate: number; mandatory: boolean; persistent: boolean; size: number;
        confirmTimeout: number; heartbeat: number; reconnectTimeout: number; report?: string;
        outbox?: string; runId?: string; startAt?: number; printSent?: number; progressLines?: boolean;
      }) => {
        if (o.outbox !== undefined) {
          if (o.tx || !o.confirms || o.confirmMode !== 'async') throw new UsageError('--outbox publishes with async confirms: it cannot be combined with --tx, --confirms=false or --confirm-mode');
          if (o.report !== undefined) throw new UsageError('--outbox keeps its record in the outbox file: --report is not supported with it');
          if (o.mandatory) throw new UsageError('--outbox does not handle basic.return: a returned row would be marked published; leave out --mandatory');
          if (o.startAt !== undefined) throw new UsageError('--outbox resumes from its pending rows: --start-at does not apply');
        }
        if (o.startAt !== undefined && o.startAt >= o.count) throw new UsageError(`--start-at ${o.startAt} is not below -n ${o.count}`);
        const harness = o.runId !== undefined || o.startAt !== undefined || o.printSent !== undefined || o.progressLines === true;
        return dispatch({
          command: 'producer',
          options: {
            json: o.json,
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
            reportFile: o.report,
            ...(o.outbox === undefined ? {} : { outboxFile: o.outbox }),
            ...(harness ? { harness: { runId: o.runId, startAt: o.startAt ?? 0, printSentEvery: o.printSent, progressLines: o.progressLines === true } } : {}),
          },
        });
      },
    );

  program
    .command('verify')
    .description('drain the queue and reconcile it with a producer report: lost, silently lost, duplicated, recovered, unexpected')
    .requiredOption('--report <file>', 'the report `rmq-bench producer --report` wrote')
    .option('--queue <name>', 'queue to drain (default: the report’s)')
    .addOption(urlsOption())
    .addOption(new Option('--idle <duration>', 'stop once nothing arrived for this long and the queue is empty').argParser(durationMs).default(2_000, '2s'))
    .addOption(jsonOption())
    .action((o: { json: boolean; report: string; queue?: string; urls?: string[]; idle: number }) =>
      dispatch({ command: 'verify', options: { json: o.json, reportFile: o.report, queue: o.queue, urls: o.urls, idleMs: o.idle } }),
    );

  program
    .command('compare')
    .description('the main demo: confirms on vs off, each under a fault on the queue leader, every message counted')
    .addOption(new Option('-n, --count <n>', 'messages per run').argParser(positiveInt).default(20_000))
    .addOption(new Option('-r, --rate <n>', 'messages per second; 0 = as fast as possible').argParser(nonNegativeInt).default(0))
    .addOption(new Option('--fault <kind>', 'fault applied to the leader').choices([...FAULT_KINDS, 'none']).default('kill'))
    .addOption(new Option('--fault-at <share>', 'share of the messages written before the fault (0..1)').argParser(share).default(0.3))
    .addOption(new Option('--restore-after <duration>', 'keep the leader faulted at least this long').argParser(durationMs).default(0, '0: once the new leader is seen'))
    .addOption(new Option('--runs <k>', 'repeat each mode K times (one run’s loss depends on timing)').argParser(positiveInt).default(1))
    .addOption(new Option('--mode <mode>', 'only one side').choices(['on', 'off', 'both']).default('both'))
    .addOption(new Option('--window <n>', 'confirms on: async window').argParser(positiveInt).default(256))
    .option('--queue <name>', 'quorum queue; messages are routed to it with its name as routing key', 'demo.orders')
    .option('--exchange <name>', "exchange to publish to (default: demo.orders for demo.orders, else the default exchange '')")
    .option('--vhost <name>', 'virtual host', '/')
    .addOption(new Option('-s, --size <bytes>', 'message body size').argParser(nonNegativeInt).default(100))
    .addOption(new Option('--confirm-timeout <duration>', 'confirms on: a confirm not received within this is indeterminate').argParser(durationMs).default(5_000, '5s'))
    .addOption(new Option('--heartbeat <duration>', 'AMQP heartbeat').argParser(durationMs).default(5_000, '5s'))
    .addOption(urlsOption())
    .addOption(
      new Option('--management-url <list>', 'management API of a cluster that is not ours (http://user:pass@host:15672, comma-separated)').argParser(httpUrlList),
    )
    .option('--fault-cmd <command>', "fault a node of a cluster that is not ours with this shell command ({node}, {host}, {fault} are filled in), e.g. 'kubectl delete pod {host}'")
    .option('--restore-cmd <command>', 'undo --fault-cmd (without it, the platform is expected to heal the node)')
    .addOption(jsonOption())
    .addOption(htmlOption())
    .action(
      (o: { json: boolean; html?: string; urls?: string[]; managementUrl?: string[]; faultCmd?: string; restoreCmd?: string; count: number; rate: number; fault: FaultKind | 'none'; faultAt: number; restoreAfter: number; runs: number; mode: 'on' | 'off' | 'both'; window: number; queue: string; exchange?: string; vhost: string; size: number; confirmTimeout: number; heartbeat: number }) =>
        dispatch({
          command: 'compare',
          options: {
            json: o.json,
            html: o.html,
            queue: o.queue,
            exchange: o.exchange ?? (o.queue === 'demo.orders' ? 'demo.orders' : ''),
            vhost: o.vhost,
            count: o.count,
            ratePerSec: o.rate,
            sizeBytes: o.size,
            window: o.window,
            confirmTimeoutMs: o.confirmTimeout,
            heartbeatS: heartbeatSeconds(o.heartbeat),
            fault: checkedFault(o.fault, o.faultCmd, o.restoreCmd),
            faultAt: o.faultAt,
            restoreAfterMs: o.restoreAfter,
            runs: o.runs,
            modes: (o.mode === 'on' ? ['confirms-on'] : o.mode === 'off' ? ['confirms-off'] : ['confirms-on', 'confirms-off']) as CompareMode[],
            electionTimeoutMs: 60_000,
            rejoinTimeoutMs: 180_000,
            drainIdleMs: 2_000,
            reconnectTimeoutMs: 60_000,
            urls: o.urls,
            managementUrls: o.managementUrl,
            faultCmd: o.faultCmd,
            restoreCmd: o.restoreCmd,
          },
        }),
    );

  program
    .command('consumer')
    .description('consume with manual ack or autoack, prefetch, simulated work, failures and crashes; optionally idempotent')
    .addOption(urlsOption())
    .option('--queue <name>', 'queue', 'demo.orders')
    .addOption(new Option('--prefetch <n>', 'unacked deliveries at most (0 = unlimited; ignored with --autoack)').argParser(prefetchCount).default(10))
    .option('--autoack', 'the broker forgets a message as soon as it sends it', false)
    .option('--nack', "the article's crash: on every delivery, log its number and close the connection without acking (prefetch 1)", false)
    .addOption(new Option('--on-failure <action>', 'what a failing delivery does').choices(FAILURE_ACTIONS))
    .addOption(new Option('--fail-every <n>', 'fail every N-th delivery (with --on-failure)').argParser(positiveInt).conflicts('failRate'))
    .addOption(new Option('--fail-rate <p>', 'fail deliveries with probability p (with --on-failure)').argParser(share).conflicts('failFirst'))
    .addOption(new Option('--fail-first <n>', 'fail the first N deliveries, then succeed (with --on-failure)').argParser(positiveInt).conflicts('failEvery'))
    .addOption(new Option('--work-ms <ms>', 'simulated processing time per message').argParser(nonNegativeInt).default(0))
    .addOption(new Option('--multi-ack-every <n>', 'manual ack: one multiple-ack every N messages').argParser(positiveInt).default(1))
    .addOption(new Option('-n, --count <n>', 'stop after N messages processed').argParser(positiveInt))
    .addOption(new Option('--idle-timeout <duration>', 'stop when nothing arrived for this long').argParser(durationMs).default(5_000, '5s'))
    .option('--idempotent', 'record processed message ids (SQLite) in the same transaction as the work; skip and ack duplicates', false)
    .option('--store <file>', 'the SQLite store of processed messages (default with --idempotent: .rmq-bench/consumer.sqlite)')
    .addOption(new Option('--heartbeat <duration>', 'AMQP heartbeat').argParser(durationMs).default(5_000, '5s'))
    .addOption(new Option('--reconnect-timeout <duration>', 'give up when no broker answers for this long').argParser(durationMs).default(60_000, '60s'))
    .addOption(jsonOption())
    .action(
      (o: {
        json: boolean; urls?: string[]; queue: string; prefetch: number; autoack: boolean; nack: boolean; onFailure?: FailureAction; failEvery?: number; failRate?: number; failFirst?: number;
        workMs: number; multiAckEvery: number; count?: number; idleTimeout: number; idempotent: boolean; store?: string; heartbeat: number; reconnectTimeout: number;
      }) => {
        if (o.nack && o.autoack) throw new UsageError('--nack needs manual ack: with --autoack the broker has already forgotten the message');
        if ((o.failEvery !== undefined || o.failRate !== undefined || o.failFirst !== undefined) && o.onFailure === undefined) {
          throw new UsageError('--fail-every, --fail-rate and --fail-first need --on-failure');
        }
        return dispatch({
          command: 'consumer',
          options: {
            json: o.json,
            urls: o.urls,
            queue: o.queue,
            prefetch: o.nack ? 1 : o.prefetch,
            autoAck: o.autoack,
            crashOnDelivery: o.nack,
            failure: o.onFailure ? { action: o.onFailure, every: o.failEvery, rate: o.failRate, ...(o.failFirst === undefined ? {} : { first: o.failFirst }) } : undefined,
            workMs: o.workMs,
            ackEvery: o.multiAckEvery,
            count: o.count,
            idleTimeoutMs: o.idleTimeout,
            idempotent: o.idempotent,
            storeFile: o.store ?? (o.idempotent ? '.rmq-bench/consumer.sqlite' : undefined),
            heartbeatS: heartbeatSeconds(o.heartbeat),
            reconnectTimeoutMs: o.reconnectTimeout,
          },
        });
      },
    );

  program
    .command('consumer-crash')
    .description('SIGKILL a consumer mid-run: autoack vs manual ack vs manual ack with an idempotent store, every message reconciled')
    .addOption(new Option('-n, --count <n>', 'messages per run').argParser(positiveInt).default(2_000))
    .addOption(new Option('--prefetch <n>', 'manual ack: unacked deliveries at most').argParser(prefetchCount).default(50))
    .addOption(new Option('--work-ms <ms>', 'simulated processing time per message').argParser(nonNegativeInt).default(2))
    .addOption(new Option('--kill-at <share>', 'share of the messages processed before the SIGKILL').argParser(share).default(0.3))
    .addOption(new Option('--multi-ack-every <n>', 'manual modes: one multiple-ack every N messages (the unacked tail is what a crash redelivers)').argParser(positiveInt).default(10))
    .addOption(new Option('--runs <k>', 'repeat each mode K times').argParser(positiveInt).default(1))
    .addOption(new Option('--modes <list>', 'comma-separated: autoack, manual, idempotent').argParser(crashModes).default([...CRASH_MODES], 'all three'))
    .option('--queue <name>', 'queue (purged before each run)', 'demo.orders')
    .addOption(jsonOption())
    .addOption(htmlOption())
    .action((o: { json: boolean; html?: string; count: number; prefetch: number; workMs: number; killAt: number; multiAckEvery: number; runs: number; modes: CrashMode[]; queue: string }) =>
      dispatch({
        command: 'consumer-crash',
        options: {
          json: o.json,
            html: o.html,
          queue: o.queue,
          exchange: o.queue === 'demo.orders' ? 'demo.orders' : '',
          count: o.count,
          prefetch: o.prefetch,
          workMs: o.workMs,
          ackEvery: o.multiAckEvery,
          killAt: o.killAt,
          runs: o.runs,
          modes: o.modes,
          idleTimeoutMs: 3_000,
        },
      }),
    );

  program
    .command('prefetch-demo')
    .description('a fast and a slow consumer at prefetch 1, 10 and 0: how the messages are split, how long it takes, how many each hoards')
    .addOption(new Option('-n, --count <n>', 'messages per prefetch value').argParser(positiveInt).default(300))
    .addOption(new Option('--prefetch <list>', 'comma-separated prefetch values (0 = unlimited)').argParser(prefetchList).default([1, 10, 0], '1,10,0'))
    .addOption(new Option('--fast-ms <ms>', 'work per message, fast consumer').argParser(nonNegativeInt).default(1))
    .addOption(new Option('--slow-ms <ms>', 'work per message, slow consumer').argParser(nonNegativeInt).default(20))
    .option('--queue <name>', 'queue (purged before each value)', 'demo.orders')
    .addOption(jsonOption())
    .addOption(htmlOption())
    .action((o: { json: boolean; html?: string; count: number; prefetch: number[]; fastMs: number; slowMs: number; queue: string }) =>
      dispatch({
        command: 'prefetch-demo',
        options: {
          json: o.json,
            html: o.html,
          queue: o.queue,
          exchange: o.queue === 'demo.orders' ? 'demo.orders' : '',
          count: o.count,
          prefetches: o.prefetch,
          fastWorkMs: o.fastMs,
          slowWorkMs: o.slowMs,
        },
      }),
    );

  program
    .command('dlq-demo')
    .description('every way a message reaches demo.dlq (delivery limit, reject, TTL, max-length), verified by x-first-death-reason')
    .addOption(new Option('--reason <reasons>', `which ways, comma-separated: ${DLQ_REASONS.join(', ')}, or all`).argParser(dlqReasons).default(['delivery_limit'], 'delivery_limit'))
    .addOption(new Option('-n, --count <n>', 'messages per reason').argParser(positiveInt).default(3))
    .addOption(new Option('--ttl <duration>', 'expired: per-message expiration').argParser(durationMs).default(1_000, '1s'))
    .addOption(new Option('--max-length <n>', 'maxlen: x-max-length of the temporary policy').argParser(positiveInt).default(2))
    .option('--auto', 'no pauses between steps (the default pauses only when stdin is a TTY)', false)
    .addOption(jsonOption())
    .addOption(htmlOption())
    .action((o: { json: boolean; html?: string; auto: boolean; reason: DlqReason[]; count: number; ttl: number; maxLength: number }) =>
      dispatch({
        command: 'dlq-demo',
        options: {
          json: o.json,
            html: o.html,
          auto: o.auto,
          reasons: o.reason,
          count: o.count,
          ttlMs: o.ttl,
          maxLength: o.maxLength,
        },
      }),
    );

  program
    .command('retry-demo')
    .description('the TTL retry loop demo.orders → demo.dlx → demo.retry → demo.orders, with each gap measured and checked; --backoff: a ladder of retry queues ending in demo.dlq')
    .addOption(new Option('--failures <k>', 'attempts that fail before one succeeds').argParser(nonNegativeInt).default(2))
    .addOption(new Option('--tolerance <duration>', 'accepted lateness of each retry over the TTL').argParser(durationMs).default(2_000, '2s'))
    .addOption(new Option('--backoff <durations>', 'a ladder of retry queues with these TTLs (e.g. 5s,30s,5m), routed by attempt; exhausted → demo.dlq').argParser(durationList))
    .addOption(new Option('--time-scale <factor>', 'multiply the --backoff TTLs (0.1 shrinks 5s,30s,5m to 0.5s,3s,30s for a workshop)').argParser(positiveNumber).default(1))
    .option('--auto', 'no pauses between steps (the default pauses only when stdin is a TTY)', false)
    .addOption(jsonOption())
    .addOption(htmlOption())
    .action((o: { json: boolean; html?: string; auto: boolean; failures: number; tolerance: number; backoff?: number[]; timeScale: number }) => {
      if (o.backoff === undefined && o.timeScale !== 1) throw new UsageError('--time-scale needs --backoff');
      const ladder = o.backoff === undefined ? undefined : { backoffMs: o.backoff.map((ms) => Math.max(1, Math.round(ms * o.timeScale))), timeScale: o.timeScale };
      if (ladder && o.failures > ladder.backoffMs.length) {
        throw new UsageError(`--failures ${o.failures} is more than the ${ladder.backoffMs.length} rungs of --backoff: the message would end in demo.dlq (the poison message already shows that)`);
      }
      return dispatch({ command: 'retry-demo', options: { json: o.json,
            html: o.html, auto: o.auto, failures: o.failures, toleranceMs: o.tolerance, ladder } });
    });

  program
    .command('durability-demo')
    .description('transient and persistent messages in a durable classic queue and a quorum queue, every node restarted: what survived')
    .addOption(new Option('-n, --count <n>', 'messages of each delivery mode, per queue').argParser(positiveInt).default(1_000))
    .addOption(new Option('--how <how>', 'stop (clean shutdown) or kill (a crash) the nodes').choices(RESTART_HOW).default('stop'))
    .addOption(new Option('--restart-timeout <duration>', 'how long the nodes may take to come back').argParser(durationMs).default(180_000, '3m'))
    .addOption(new Option('--queue-age <duration>', 'how long the new queues exist before publishing (0 with --how kill: see what a crash does to a queue declared a moment before)').argParser(durationMs).default(10_000, '10s'))
    .option('--auto', 'no pauses between steps (the default pauses only when stdin is a TTY)', false)
    .addOption(jsonOption())
    .addOption(htmlOption())
    .action((o: { json: boolean; html?: string; auto: boolean; count: number; how: RestartHow; restartTimeout: number; queueAge: number }) =>
      dispatch({ command: 'durability-demo', options: { json: o.json, html: o.html, auto: o.auto, count: o.count, how: o.how, restartTimeoutMs: o.restartTimeout, queueAgeMs: o.queueAge } }),
    );

  program
    .command('delayed-retry-demo')
    .description('RabbitMQ 4.3 native delayed retry: each redelivery delay measured against min(min × x-delivery-count, max)')
    .addOption(new Option('--type <type>', 'which returns are delayed').choices(DELAYED_RETRY_TYPES).default('all'))
    .addOption(new Option('--min <ms>', 'delayed-retry-min, in ms (a duration like 2s works too)').argParser(millisOrDuration).default(2_000))
    .addOption(new Option('--max <ms>', 'delayed-retry-max, in ms').argParser(millisOrDuration).default(10_000))
    .addOption(new Option('-n, --count <n>', 'messages').argParser(positiveInt).default(3))
    .addOption(new Option('--returns <k>', 'returns of the kinds the type delays, per message').argParser(positiveInt).default(5))
    .addOption(new Option('--via <how>', 'set it by a temporary policy on demo.orders, or by queue arguments on demo.delayed-retry').choices(DELAYED_RETRY_VIA).default('policy'))
    .addOption(new Option('--tolerance <duration>', 'accepted lateness of each redelivery').argParser(durationMs).default(1_000, '1s'))
    .addOption(new Option('--skip-setup', 'testing: leave delayed retry off; the verdict must fail').hideHelp())
    .option('--auto', 'no pauses between steps (the default pauses only when stdin is a TTY)', false)
    .addOption(jsonOption())
    .addOption(htmlOption())
    .action(
      (o: { json: boolean; html?: string; auto: boolean; type: DelayedRetryType; min: number; max: number; count: number; returns: number; via: DelayedRetryVia; tolerance: number; skipSetup?: boolean }) => {
        if (o.min <= 0) throw new UsageError('--min must be above 0 ms');
        if (o.max < o.min) throw new UsageError(`--max ${o.max} ms is below --min ${o.min} ms`);
        return dispatch({
          command: 'delayed-retry-demo',
          options: {
            json: o.json,
            html: o.html,
            auto: o.auto,
            type: o.type,
            minMs: o.min,
            maxMs: o.max,
            count: o.count,
            returns: o.returns,
            via: o.via,
            toleranceMs: o.tolerance,
            skipSetup: o.skipSetup === true,
          },
        });
      },
    );

  const dlq = program.command('dlq').description('the dead-letter queue: inspect it without losing anything, replay it safely').exitOverride();
  dlq
    .command('inspect')
    .description('a table of the DLQ’s messages (id, reason, source queue, count, death times); they stay in the queue')
    .option('--queue <name>', 'dead-letter queue', 'demo.dlq')
    .addOption(new Option('--limit <n>', 'show at most N').argParser(positiveInt).default(1_000))
    .addOption(jsonOption())
    .action((o: { json: boolean; queue: string; limit: number }) => dispatch({ command: 'dlq inspect', options: o }));
  dlq
    .command('replay')
    .description('republish dead letters with confirms, removing each only after its confirm')
    .option('--queue <name>', 'dead-letter queue', 'demo.dlq')
    .option('--to <queue>', 'queue to replay into (through the default exchange)', 'demo.orders')
    .addOption(new Option('--limit <n>', 'replay at most N').argParser(positiveInt).default(1_000_000))
    .option('--filter <expr>', 'reason=<reason> or queue=<source queue>')
    .addOption(new Option('--crash-after <n>', 'testing: drop the connection after N confirmed replays').argParser(positiveInt).hideHelp())
    .addOption(jsonOption())
    .action((o: { json: boolean; queue: string; to: string; limit: number; filter?: string; crashAfter?: number }) =>
      dispatch({ command: 'dlq replay', options: { json: o.json, queue: o.queue, to: o.to, limit: o.limit, filter: o.filter, crashAfter: o.crashAfter } }),
    );

  registerBench(program, dispatch);
  registerAudit(program, dispatch);
  registerWatch(program, dispatch);
  registerProducerCrash(program, dispatch);

  return program;
}
