import { Command, Option } from 'commander';
import { createRequire } from 'node:module';
import { FAULT_KINDS, type FaultKind } from '../cluster/faults.js';
import { durationMs, nodeName, positiveInt } from './options.js';

/** argv → one typed invocation. No side effects: main.ts dispatches it. */
export type Invocation =
  | { command: 'cluster up'; options: { json: boolean; timeoutMs: number } }
  | { command: 'cluster down'; options: { json: boolean; volumes: boolean } }
  | { command: 'cluster reset'; options: { json: boolean; hard: boolean; timeoutMs: number } }
  | { command: 'cluster status'; options: { json: boolean } }
  | { command: 'cluster logs'; options: { node: string | undefined; follow: boolean; tail: number | undefined } }
  | { command: 'cluster image'; options: { json: boolean; rebuild: boolean } }
  | { command: 'failover'; options: FailoverCliOptions }
  | { command: 'not-landed'; options: { name: string; issue: number } };

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

export type Dispatch = (invocation: Invocation) => Promise<void>;

const require = createRequire(import.meta.url);
const { version } = require('../../package.json') as { version: string };

const jsonOption = (): Option => new Option('--json', 'print one JSON document on stdout (people-facing output stays on stderr)').default(false);

export function createProgram(dispatch: Dispatch): Command {
  const program = new Command('rmq-bench')
    .description('Shows, with numbers from a real 3-node RabbitMQ cluster, where messages get lost and what prevents it.')
    .version(version, '-V, --version')
    .exitOverride()
    .configureOutput({ writeOut: (s) => process.stdout.write(s), writeErr: (s) => process.stderr.write(s) });

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

  const notLanded: [string, string, number][] = [
    ['producer', 'publish N messages with or without confirms, counting every one', 3],
    ['consumer', 'consume with manual ack or autoack, prefetch, crash simulation', 4],
    ['dlq-demo', 'messages that reach the dead-letter queue, verified', 5],
    ['retry-demo', 'TTL retry queue loop, with measured gaps', 5],
    ['delayed-retry-demo', 'RabbitMQ 4.3 native delayed retry, measured', 5],
  ];
  for (const [name, description, issue] of notLanded) {
    program
      .command(name)
      .description(`${description} [not landed yet: issue #${issue}]`)
      .allowUnknownOption()
      .allowExcessArguments()
      .helpOption(false)
      .action(() => dispatch({ command: 'not-landed', options: { name, issue } }));
  }
  return program;
}
