import type { Context } from '../../context.js';
import { BrokerUnavailableError, errorMessage } from '../../errors.js';
import { renderNoAnswer, renderWatch, renderWatchLine } from '../../report/watch.js';
import { SnapshotReader } from '../../cluster/snapshot.js';
import { takeWatchSnapshot, trimHistory, watchView, type WatchSnapshot } from '../../scenarios/watch.js';
import { systemClock } from '../../util/retry.js';
import { maskUrlsIn } from '../../url.js';
import { emit } from '../output.js';
import type { WatchInvocation } from '../program-watch.js';

/** Growth alerts compare with the oldest snapshot of this window (the API refreshes about every 5 s). */
const WINDOW_MS = 10_000;

export async function watch(ctx: Context, o: WatchInvocation['options']): Promise<number> {
  const reader = new SnapshotReader(ctx.management, { retryFirstAfterMs: o.once ? undefined : 10_000 });
  const match = o.match === undefined ? undefined : new RegExp(o.match);
  const viewOptions = { gapMs: Math.max(2 * o.intervalMs, 2_500), match };

  if (o.once) {
    const view = watchView([], await takeWatchSnapshot(reader), viewOptions);
    emit(o, 'watch', view, renderWatch(view));
    return 0;
  }

  // Redraw in place on a terminal; elsewhere (a log, a pipe) one plain line per refresh.
  const stream = process.stderr;
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
}
