import type { NodeSpec } from '../config.js';
import { InterruptedError, errorMessage } from '../errors.js';
import { retryUntil } from '../util/retry.js';
import type { ClusterContext } from '../cluster/cluster-ctx.js';
import type { FaultContext } from './applied.js';
import { callNode } from '../cluster/broker/erl-call.js';
import type { LeaderFault } from './at-leader.js';
import { classicMasterCall, parseClassicMaster, parseQuorumStatus, quorumStatusCall, shortNodeName } from '../cluster/broker/queue-leadership.js';
import { ManagementClient } from '../cluster/broker/management.js';
import type { QueueRef } from '../cluster/broker/queue-leader-lookup.js';

/** A new leader seen after a leader fault. */
export interface Election {
  newLeader: string;
  /** Which watcher saw it first: management API or quorum_status. */
  source: string;
  /** performance.now() when the new leader was first seen. */
  electedAt: number;
  electionMs: number;
}

/** The leader as a survivor reports it, asked inside its container (quorumStatusCall; a classic queue's master: classicMasterCall). */
async function leaderViaCli(ctx: ClusterContext, survivor: NodeSpec, ref: QueueRef, type = 'quorum'): Promise<string | undefined> {
  const docker = await ctx.docker();
  if (type === 'classic') return parseClassicMaster(await callNode(docker, survivor.container, survivor.nodeName, classicMasterCall(ref), 15_000), ref.queue);
  return parseQuorumStatus(await callNode(docker, survivor.container, survivor.nodeName, quorumStatusCall(ref), 15_000)).leader;
}

/** How often the in-container watcher asks once it has started: a docker exec and an erl_call each time. */
const CLI_POLL_MS = 250;

/**
 * Watch the survivors until the queue reports a leader other than oldLeader. The management
 * API is polled every pollMs: it answers within ~100 ms after a kill or a stop, but hangs while
 * a member is paused or cut off. From its first failed request on, the survivors are asked in
 * their containers too (quorumStatusCall, every 250 ms, in turn), which answers in every case.
 * electionMs runs from the moment the fault was issued to the first answer that named the new
 * leader: an upper bound, within one poll of the source that saw it.
 */
export async function waitForNewLeader(ctx: FaultContext, ref: QueueRef, lf: LeaderFault, options: { timeoutMs: number; pollMs?: number }): Promise<Election> {
  const survivors = ctx.config.nodes.filter((n) => n.name !== lf.oldLeader);
  const withCli = ctx.faults.kind === 'docker';
  const quickMgmt = new ManagementClient(
    ctx.management.endpoints.filter((e) => e.node !== lf.oldLeader),
    ctx.config.user,
    ctx.config.password,
    { requestTimeoutMs: 1_000 },
  );
  const stop = new AbortController();
  const signal = AbortSignal.any([ctx.signal, stop.signal]);
  const deadline = performance.now() + options.timeoutMs;
  const isNew = (leader: string | undefined): boolean => leader !== undefined && shortNodeName(leader) !== lf.oldLeader;
  let turn = 0;
  const watch = (source: 'management' | 'cli', probe: () => Promise<string | undefined>, intervalMs: number): Promise<{ leader: string; source: string }> =>
    retryUntil(probe, isNew, {
      timeoutMs: Math.max(0, deadline - performance.now()),
      intervalMs,
      signal,
      describe: (last) =>
        `no new leader for '${ref.queue}' after '${lf.fault.kind}' of ${lf.oldLeader} (${source}, last seen: ${last.value ?? (last.error ? errorMessage(last.error) : 'none')})`,
    }).then((leader) => ({ leader: leader!, source }));
  let startCli = (): void => {};
  const management = watch(
    'management',
    async () => {
      try {
        return (await quickMgmt.queue(ref.vhost, ref.queue)).leader;
      } catch (err) {
        startCli();
        throw err;
      }
    },
    options.pollMs ?? 100,
  );
  // quorum_status is asked inside our own containers only, once the management API has failed to answer.
  const cli = new Promise<{ leader: string; source: string }>((resolve, reject) => {
    let started = false;
    startCli = () => {
      if (started || !withCli) return;
      started = true;
      watch('cli', () => leaderViaCli(ctx, survivors[turn++ % survivors.length]!, ref, lf.before.type), CLI_POLL_MS).then(resolve, reject);
    };
    // Never started: it ends with the management watcher.
    management.catch((err: unknown) => {
      if (!started) reject(err);
    });
  });
  try {
    const found = await Promise.any([management, cli]).catch((err: unknown) => {
      throw err instanceof AggregateError ? (err.errors.find((e) => e instanceof InterruptedError) ?? err.errors[0]) : err;
    });
    const electedAt = performance.now();
    return { newLeader: shortNodeName(found.leader), electedAt, electionMs: electedAt - lf.fault.issuedAt, source: found.source };
  } finally {
    stop.abort();
  }
}
