import { type Command, InvalidArgumentError, Option } from 'commander';
import { BrokerUnavailableError, UsageError, errorMessage } from '../../errors.js';
import type { WatchSnapshot } from '../../scenarios/traffic/watch.js';
import { maskUrlsIn } from '../../url.js';
import { systemClock } from '../../util/retry.js';
import { defineCommand, managementOverride } from '../command.js';
import { durationMs, givenOptions, htmlOption, jsonOption, managementUrlOption, refuseWith } from '../options.js';

/** `rmq-bench watch`: a live view of the queues and nodes, or one snapshot. */
interface WatchCliOptions {
  json: boolean;
  /** --html (with --once): also write the snapshot as a self-contained HTML report. */
  html: string | undefined;
  once: boolean;
  intervalMs: number;
  /** Only queues whose name matches this regular expression. */
  match: string | undefined;
  /** The management API of any cluster; undefined: ours. */
  managementUrls: string[] | undefined;
}

/** Growth alerts compare with the oldest snapshot of this window (the API refreshes about every 5 s). */
const WINDOW_MS = 10_000;

function regex(value: string): string {
  try {
    new RegExp(value);
  } catch {
    throw new InvalidArgumentError(`'${value}' is not a regular expression`);
  }
  return value;
}

function interval(value: string): number {
  const ms = durationMs(value);
  if (ms < 200) throw new InvalidArgumentError(`'${value}' is shorter than 200ms`);
  return ms;
}

export const watch = defineCommand({
  name: 'watch',
  examples: ['watch --match "^demo\\."', 'watch --once --json'],
  register: (command, dispatch: (o: WatchCliOptions) => Promise<void>) =>
    command
      .summary('a live view of queues, nodes and alerts')
      .description('live view, refreshed every second: per queue ready/unacked/delayed, rates, leader, online members; node states; alerts (Ctrl+C stops)')
      .option('--once', 'take one snapshot and exit (with --json: one JSON document for scripts)', false)
      .addOption(new Option('--interval <duration>', 'time between refreshes').argParser(interval).default(1_000, '1s'))
      .addOption(new Option('--match <regex>', 'only queues whose name matches').argParser(regex))
      .addOption(managementUrlOption())
      .addOption(jsonOption('with --once: print the snapshot as one JSON document on stdout'))
      .addOption(htmlOption())
      .action((o: { json: boolean; html?: string; once: boolean; interval: number; match?: string; managementUrls?: string[] }, command: Command) => {
        if (o.json && !o.once) throw new UsageError('--json needs --once (one snapshot, one JSON document)');
        if (o.html !== undefined && !o.once) throw new UsageError('--html needs --once (one snapshot, one page)');
        if (o.once) refuseWith(givenOptions(command), ['--interval'], 'does nothing with --once (one snapshot, no refresh)');
        return dispatch({ json: o.json, html: o.html, once: o.once, intervalMs: o.interval, match: o.match, managementUrls: o.managementUrls });
      }),
  overrides: (o, config) => managementOverride(o.managementUrls, config),
  async run(ctx, o) {
    const { SnapshotReader } = await import('../../cluster/broker/snapshot.js');
    const { takeWatchSnapshot, trimHistory, watchView } = await import('../../scenarios/traffic/watch.js');
    const { renderNoAnswer, renderWatch, renderWatchLine } = await import('../../report/kinds/watch/text.js');
    const reader = new SnapshotReader(ctx.management, { retryFirstAfterMs: o.once ? undefined : 10_000 });
    const match = o.match === undefined ? undefined : new RegExp(o.match);
    const viewOptions = { gapMs: Math.max(2 * o.intervalMs, 2_500), match };

    if (o.once) {
      const { emit } = await import('../output.js');
      const view = watchView([], await takeWatchSnapshot(reader), viewOptions);
      emit({ ...o, broker: await ctx.broker() }, 'watch', view);
      return;
    }

    // The view is the result: on stdout. Redrawn in place on a terminal; elsewhere (a log, a
    // pipe) one plain line per refresh.
    const stream = process.stdout;
    const tty = stream.isTTY === true;
    let history: WatchSnapshot[] = [];
    let first = true;
    // Each refresh is bounded: ManagementClient times out every request (3 s by default) and
    // moves to the next node; the sleep ends at once on Ctrl+C (InterruptedError → exit 130).
    for (;;) {
      const started = Date.now();
      try {
        const snap = await takeWatchSnapshot(reader);
        const view = watchView(history, snap, viewOptions);
        history = trimHistory([...history, snap], snap.atMs, WINDOW_MS);
        if (tty) stream.write(`\x1b[H\x1b[2J${renderWatch(view, { live: true })}\n`);
        else stream.write(`${first ? `${renderWatch(view, { live: true })}\n` : ''}${renderWatchLine(view)}\n`);
        first = false;
      } catch (err) {
        if (!(err instanceof BrokerUnavailableError)) throw err;
        const last = history[history.length - 1];
        stream.write(`${renderNoAnswer(Date.now(), last?.atMs, maskUrlsIn(errorMessage(err)))}\n`);
      }
      await systemClock.sleep(Math.max(0, o.intervalMs - (Date.now() - started)), ctx.signal);
    }
  },
});
