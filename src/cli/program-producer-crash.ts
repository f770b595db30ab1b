import { InvalidArgumentError, Option, type Command } from 'commander';
import { FAULT_KINDS, type FaultKind } from '../cluster/faults.js';
import { UsageError } from '../errors.js';
import { PRODUCER_CRASH_MODES, maxKills, type ProducerCrashMode, type ProducerCrashOptions } from '../scenarios/producer-crash.js';
import { nonNegativeInt, positiveInt, writableFile } from './options.js';

/** `rmq-bench producer-crash` (issue #8): its commander definition and typed invocation (kept out of program.ts). */
export interface ProducerCrashCliOptions extends Omit<ProducerCrashOptions, 'seed'> {
  json: boolean;
  /** --html: also write a self-contained HTML report here. */
  html: string | undefined;
  /** undefined: the command picks one (and prints it, so the run can be repeated). */
  seed: number | undefined;
}

export type ProducerCrashInvocation = { command: 'producer-crash'; options: ProducerCrashCliOptions };

function modes(value: string): ProducerCrashMode[] {
  const list = value.split(',').map((v) => v.trim()).filter(Boolean);
  for (const m of list) {
    if (!(PRODUCER_CRASH_MODES as readonly string[]).includes(m)) throw new InvalidArgumentError(`'${m}' is not one of ${PRODUCER_CRASH_MODES.join(', ')}`);
  }
  if (list.length === 0) throw new InvalidArgumentError('no mode given');
  return [...new Set(list)] as ProducerCrashMode[];
}

function seed(value: string): number {
  const n = nonNegativeInt(value);
  if (n > 0xffff_ffff) throw new InvalidArgumentError(`'${value}' is above 4294967295`);
  return n;
}

const MAX_KILLS = 50;

export function registerProducerCrash(program: Command, dispatch: (invocation: ProducerCrashInvocation) => Promise<void>): void {
  program
    .command('producer-crash')
    .description('SIGKILL a producer mid-run, several times: naive restart (events in memory) vs the outbox pattern, every event reconciled')
    .addOption(new Option('-n, --count <n>', 'events the application means to send, per run and mode').argParser(positiveInt).default(2_000))
    .addOption(new Option('--kills <k>', `SIGKILLs of the producer per run, at random points (at most ${MAX_KILLS})`).argParser(positiveInt).default(3))
    .addOption(new Option('--runs <k>', 'repeat each mode K times (where a kill falls changes the outcome)').argParser(positiveInt).default(1))
    .addOption(new Option('--modes <list>', 'comma-separated: naive, outbox').argParser(modes).default([...PRODUCER_CRASH_MODES], 'both'))
    .addOption(new Option('-r, --rate <n>', 'events the application produces per second; 0 = as fast as it can (a full confirm window in flight)').argParser(nonNegativeInt).default(0))
    .addOption(new Option('--print-every <n>', 'naive: the producer logs `sent <n>` every N messages; a restart resumes after the last one').argParser(positiveInt).default(100))
    .addOption(new Option('--seed <n>', 'seed of the kill points (and fault point): the same seed, the same plan').argParser(seed))
    .addOption(new Option('--fault <kind>', 'also fault the queue leader during each run (restored before the drain)').choices([...FAULT_KINDS, 'none']).default('none'))
    .addOption(new Option('--json', 'print one JSON document on stdout (people-facing output stays on stderr)').default(false))
    .addOption(new Option('--html <file>', 'also write a self-contained HTML report (charts, the report, the JSON document)').argParser(writableFile))
    .action(
      (o: { json: boolean; html?: string; count: number; kills: number; runs: number; modes: ProducerCrashMode[]; rate: number; printEvery: number; seed?: number; fault: FaultKind | 'none' }) => {
        if (o.kills > MAX_KILLS) throw new UsageError(`--kills ${o.kills} is more than ${MAX_KILLS}`);
        if (o.kills > maxKills(o.count)) throw new UsageError(`--kills ${o.kills} does not fit in -n ${o.count}: at most ${maxKills(o.count)} distinct kill points`);
        return dispatch({
          command: 'producer-crash',
          options: {
            json: o.json,
            html: o.html,
            count: o.count,
            kills: o.kills,
            runs: o.runs,
            modes: o.modes,
            ratePerSec: o.rate,
            printEvery: o.printEvery,
            seed: o.seed,
            fault: o.fault,
            childTimeoutMs: 300_000,
            electionTimeoutMs: 60_000,
            rejoinTimeoutMs: 180_000,
            drainIdleMs: 3_000,
          },
        });
      },
    );
}
