import type { Context } from '../context.js';
import { faultLeader, restoreAndRejoin, waitForNewLeader, type LeaderFault } from '../cluster/leader-fault.js';
import { restoreQuietly, type FaultKind } from '../cluster/faults.js';
import { systemClock } from '../util/retry.js';

export interface FailoverOptions {
  vhost: string;
  queue: string;
  fault: FaultKind;
  /** null: leave the node faulted. Otherwise keep it faulted at least this long after the fault. */
  restoreAfterMs: number | null;
  electionTimeoutMs: number;
  rejoinTimeoutMs: number;
}

export interface FailoverResult {
  schemaVersion: 1;
  kind: 'failover';
  queue: string;
  vhost: string;
  fault: FaultKind;
  oldLeader: string;
  newLeader: string;
  membersBefore: string[];
  /** ISO time the fault call returned. */
  faultAt: string;
  /** How long the fault call itself took (a stop waits for the clean shutdown). */
  faultCallMs: number;
  /** Fault issued → first answer that named a different leader. */
  electionMs: number;
  /** Which watcher saw the new leader first: management (API polled every 100 ms) or cli (quorum_status in a survivor). */
  detectedBy: string;
  restored: boolean;
  /** Fault → restore call. */
  downMs: number | null;
  /** Restore call → node running in the cluster with every queue member online. */
  rejoinMs: number | null;
  membersAfter: string[] | null;
  onlineAfter: string[] | null;
}

/** Fault the queue's leader, measure the election, restore the node and wait until it is back. Never prints. */
export async function runFailover(ctx: Context, opts: FailoverOptions): Promise<FailoverResult> {
  const ref = { vhost: opts.vhost, queue: opts.queue };
  const { progress } = ctx;
  progress.start(`finding the leader of ${opts.queue}`);
  let lf: LeaderFault | undefined;
  try {
    lf = await faultLeader(ctx, ref, opts.fault);
    progress.succeed(`leader of ${opts.queue} was ${lf.oldLeader}: applied '${opts.fault}' to ${lf.oldLeader}`);
    progress.start(`waiting for a new leader of ${opts.queue}`);
    const election = await waitForNewLeader(ctx, ref, lf, { timeoutMs: opts.electionTimeoutMs });
    progress.succeed(`new leader: ${election.newLeader}, seen ${Math.round(election.electionMs)} ms after the fault (${election.source})`);

    const base = {
      schemaVersion: 1 as const,
      kind: 'failover' as const,
      queue: opts.queue,
      vhost: opts.vhost,
      fault: opts.fault,
      oldLeader: lf.oldLeader,
      newLeader: election.newLeader,
      membersBefore: lf.before.members,
      faultAt: lf.fault.appliedAtIso,
      faultCallMs: lf.fault.appliedAt - lf.fault.issuedAt,
      electionMs: election.electionMs,
      detectedBy: election.source,
    };
    if (opts.restoreAfterMs === null) {
      progress.info(`${lf.oldLeader} left under '${opts.fault}' (--no-restore); 'rmq-bench cluster up' brings it back`);
      return { ...base, restored: false, downMs: null, rejoinMs: null, membersAfter: null, onlineAfter: null };
    }
    const waitMs = lf.fault.issuedAt + opts.restoreAfterMs - performance.now();
    if (waitMs > 0) {
      progress.start(`keeping ${lf.oldLeader} down for ${Math.round(waitMs / 1000)} s more (--restore-after)`);
      await systemClock.sleep(waitMs, ctx.signal);
    }
    progress.start(`restoring ${lf.oldLeader} and waiting until it is back in the cluster`);
    const rejoin = await restoreAndRejoin(ctx, ref, lf, { timeoutMs: opts.rejoinTimeoutMs });
    progress.succeed(`${lf.oldLeader} back: ${rejoin.online.length} of ${rejoin.members.length} members online, ${Math.round(rejoin.rejoinMs)} ms after the restore`);
    return {
      ...base,
      restored: true,
      downMs: rejoin.restoredAt - lf.fault.issuedAt,
      rejoinMs: rejoin.rejoinMs,
      membersAfter: rejoin.members,
      onlineAfter: rejoin.online,
    };
  } catch (err) {
    progress.stop(); // the error line says what failed
    throw err;
  } finally {
    // Ctrl+C or an error mid-way: undo the fault (unless the user asked to keep it).
    if (lf && !lf.fault.restored && opts.restoreAfterMs !== null) {
      progress.info(`restoring ${lf.oldLeader} ('${opts.fault}' undone)`);
      await restoreQuietly(lf.fault, ctx.log);
    }
  }
}
