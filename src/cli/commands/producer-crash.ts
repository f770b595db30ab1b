import { type Command, Option } from 'commander';
import { FAULT_KINDS, type FaultKind, oneShotProblem } from '../../faults/kinds.js';
import { UsageError } from '../../errors.js';
import type { ProducerCrashOptions } from '../../scenarios/crashes/producer-crash-result.js';
import { PRODUCER_CRASH_MODES, type ProducerCrashMode } from '../../scenarios/crashes/producer-crash-modes.js';
import { maxKills } from '../../scenarios/crashes/producer-crash-plan.js';
import { checkpointCmdOption, checkpointOverride } from '../checkpoint-option.js';
import { defineCommand } from '../command.js';
import { addVerdictOptions, emitVerdict, type VerdictOptions, verdictOptions } from '../verdict-options.js';
import {
  choiceList,
  countOption,
  givenOptions,
  refuseWith,
  htmlOption,
  jsonOption,
  positiveInt,
  randomSeed,
  rateOption,
  runsOption,
  seedValue,
} from '../options.js';

/**
 * `rmq-bench producer-crash` (issue #8): SIGKILL a producer (`rmq-bench producer` as a child,
 * with its hidden harness options) mid-run, naive restart vs the outbox pattern.
 */
export interface ProducerCrashCliOptions extends Omit<ProducerCrashOptions, 'seed'> {
  json: boolean;
  /** --html: also write a self-contained HTML report here. */
  html: string | undefined;
  /** undefined: the command picks one (and prints it, so the run can be repeated). */
  seed: number | undefined;
  /** --checkpoint-cmd: the user's command before each run's drain. */
  checkpointCmd: string | undefined;
  /** --max-lost, --max-duplicates, --junit. */
  verdict: VerdictOptions;
}

interface RawOptions {
  json: boolean;
  html?: string;
  count: number;
  kills: number;
  runs: number;
  modes: ProducerCrashMode[];
  rate: number;
  printEvery: number;
  seed?: number;
  fault: FaultKind | 'none';
  checkpointCmd?: string;
}

const MAX_KILLS = 50;

function producerCrashOptions(o: RawOptions, given: ReadonlySet<string>): ProducerCrashCliOptions {
  if (!o.modes.includes('naive')) refuseWith(given, ['--print-every'], 'is for the naive mode, which --modes leaves out');
  if (o.kills > MAX_KILLS) throw new UsageError(`--kills ${o.kills} is more than ${MAX_KILLS}`);
  if (o.kills > maxKills(o.count)) throw new UsageError(`--kills ${o.kills} does not fit in -n ${o.count}: at most ${maxKills(o.count)} distinct kill points`);
  const how = `--runs ${o.runs} of ${o.modes.length} mode${o.modes.length === 1 ? '' : 's'}`;
  const once = oneShotProblem(o.fault, o.runs * o.modes.length, how, 'once: --runs 1 and one of --modes');
  if (once) throw new UsageError(once);
  return {
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
    checkpointCmd: o.checkpointCmd,
    childTimeoutMs: 300_000,
    electionTimeoutMs: 60_000,
    rejoinTimeoutMs: 180_000,
    drainIdleMs: 3_000,
    verdict: verdictOptions(o, 'producer-crash'),
  };
}

export const producerCrash = defineCommand({
  name: 'producer-crash',
  examples: ['producer-crash --runs 5', 'producer-crash --modes outbox --kills 5 --seed 3 --fault kill'],
  register: (command, dispatch: (o: ProducerCrashCliOptions) => Promise<void>) =>
    addVerdictOptions(
      command
        .summary('SIGKILL a producer: naive restart vs outbox')
        .description('SIGKILL a producer mid-run, several times: naive restart (events in memory) vs the outbox pattern, every event reconciled')
        .addOption(countOption('events the application means to send, per run and mode', 2_000))
        .addOption(new Option('--kills <k>', `SIGKILLs of the producer per run, at random points (at most ${MAX_KILLS})`).argParser(positiveInt).default(3))
        .addOption(runsOption('repeat each mode K times (where a kill falls changes the outcome)'))
        .addOption(
          new Option('--modes <list>', 'comma-separated: naive, outbox')
            .argParser((v) => [...new Set(choiceList(v, PRODUCER_CRASH_MODES))])
            .default([...PRODUCER_CRASH_MODES], 'both'),
        )
        .addOption(rateOption('events the application produces per second; 0 = as fast as it can (a full confirm window in flight)', 0))
        .addOption(
          new Option('--print-every <n>', 'naive: the producer logs `sent <n>` every N messages; a restart resumes after the last one')
            .argParser(positiveInt)
            .default(100),
        )
        .addOption(new Option('--seed <n>', 'seed of the kill points (and fault point): the same seed, the same plan').argParser(seedValue))
        .addOption(
          new Option('--fault <kind>', 'also fault the queue leader during each run (restored before the drain)')
            .choices([...FAULT_KINDS, 'none'])
            .default('none'),
        )
        .addOption(checkpointCmdOption("before each run's queue is drained (the producer's last life over, a fault healed)"))
        .addOption(jsonOption())
        .addOption(htmlOption()),
      'producer-crash',
    ).action((o: RawOptions, command: Command) => dispatch(producerCrashOptions(o, givenOptions(command)))),
  overrides: async (o) => checkpointOverride(o.checkpointCmd),
  async run(ctx, o) {
    const { json, html, seed, checkpointCmd: _c, verdict, ...rest } = o;
    // No --seed: a random one, shown in the report so that the same kill points can be replayed.
    const options: ProducerCrashOptions = { ...rest, seed: seed ?? randomSeed() };
    const { runProducerCrash } = await import('../../scenarios/crashes/producer-crash.js');
    ctx.progress.info(`producer-crash: seed ${options.seed} (rerun the same kill points with --seed ${options.seed})`);
    const r = await runProducerCrash(ctx, options);
    return { ok: await emitVerdict({ json, html, broker: await ctx.broker() }, verdict, 'producer-crash', r) };
  },
});
