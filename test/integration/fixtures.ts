import Docker from 'dockerode';
import { execa } from 'execa';
import { afterAll, beforeAll, expect } from 'vitest';
import { containerOf, eventually, mgmtGet, NODES, parseJson, runCli, withChannel } from './cli.js';

/** Within a describe: the quorum queue `queue` is declared before its tests and deleted after them. */
export function useQuorumQueue(queue: string): void {
  beforeAll(async () => {
    await withChannel((ch) => ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } }));
  });
  afterAll(async () => {
    await withChannel((ch) => ch.deleteQueue(queue)).catch(() => undefined);
  });
}

/**
 * After a restored fault, as `cluster status --json` sees it (all 3 nodes run, every member of
 * `queue` online) and as Docker and the management API see it without rmq-bench: nothing a node
 * fault leaves behind (nodeLeftovers).
 */
export async function expectClusterWhole(queue: string): Promise<void> {
  const status = parseJson<{ nodes: { container: string; running: boolean }[]; queues: { name: string; online: string[] }[] }>(
    await runCli(['cluster', 'status', '--json']),
  );
  expect(status.nodes.map((n) => [n.container, n.running])).toEqual([
    ['running', true],
    ['running', true],
    ['running', true],
  ]);
  expect(status.queues.find((q) => q.name === queue)?.online).toHaveLength(3);
  // The management API's own view a moment later: a member just restarted was seen listed online
  // by cluster status and not yet by this read; it has 30 s to be online there too.
  await eventually(async () => expect(await nodeLeftovers(queue)).toEqual([]), 30_000, 1_000);
}

/** A command in a node's network namespace, from the host (as rmq-bench applies the faults). */
export async function inNetns(node: string, cmd: string[]): Promise<string> {
  const pid = (await new Docker().getContainer(containerOf(node)).inspect()).State.Pid;
  const r = await execa('nsenter', ['-t', String(pid), '-n', ...cmd], { reject: false });
  if (r.exitCode !== 0) throw new Error(`nsenter ${cmd.join(' ')} in ${node}: exit ${r.exitCode}: ${r.stderr}`);
  return r.stdout;
}

/** rmq-bench's iptables rules and netem or tbf qdiscs left in any node: what a healed network fault must not leave. */
export async function netLeftovers(): Promise<string[]> {
  const out: string[] = [];
  for (const n of NODES) {
    for (const l of (await inNetns(n, ['iptables', '-S'])).split('\n')) if (l.includes('rmq-bench')) out.push(`${n}: ${l}`);
    const qdiscs = await inNetns(n, ['tc', 'qdisc', 'show']);
    if (qdiscs.includes('netem')) out.push(`${n}: netem`);
    if (/qdisc tbf \S+ (dev \S+ )?root/.test(qdiscs)) out.push(`${n}: tbf`);
  }
  return out;
}

/**
 * What a restored fault of a node (kill, stop, pause, quorum loss, a rolling restart, membership)
 * must not leave behind, read from Docker and the management API: a container stopped or paused,
 * a node the cluster does not list or does not see running, a member of `queue` gone from it or not online. Empty
 * when nothing is left.
 */
export async function nodeLeftovers(queue: string): Promise<string[]> {
  const out: string[] = [];
  const docker = new Docker();
  for (const n of NODES) {
    const st = (await docker.getContainer(containerOf(n)).inspect()).State;
    if (!st.Running || st.Paused) out.push(`${n}: container ${st.Paused ? 'paused' : st.Status}`);
  }
  const nodes = await mgmtGet<{ name: string; running: boolean }[]>('/api/nodes');
  for (const n of nodes) if (!n.running) out.push(`${n.name}: not running`);
  for (const n of NODES) if (!nodes.some((m) => m.name === `rabbit@${n}`)) out.push(`${n}: not in the cluster`);
  const q = await mgmtGet<{ members?: string[]; online?: string[] }>(`/api/queues/%2F/${encodeURIComponent(queue)}`);
  if ((q.members ?? []).length !== NODES.length) out.push(`${queue}: members ${(q.members ?? []).join(',')}`);
  if ((q.online ?? []).length !== NODES.length) out.push(`${queue}: online ${(q.online ?? []).join(',')}`);
  return out;
}

/**
 * The stream coordinator, where a stream was ever declared (some node runs its member): every node
 * runs a member, and the members each node's own member reports (ra:members, answered through the
 * leader) are every node, by rabbitmqctl eval in each container. Empty when nothing is left, or
 * when no node runs a member.
 */
export async function coordinatorLeftovers(): Promise<string[]> {
  const expr = '{is_pid(whereis(rabbit_stream_coordinator)), catch ra:members({rabbit_stream_coordinator, node()}, 10000)}.';
  const said = await Promise.all(
    NODES.map(async (n) => {
      const r = await execa('docker', ['exec', containerOf(n), 'rabbitmqctl', '-q', 'eval', expr], { reject: false, timeout: 60_000 });
      if (r.exitCode !== 0) throw new Error(`rabbitmqctl eval on ${n} exited ${r.exitCode}: ${r.stderr || r.stdout}`);
      return r.stdout.replace(/\s+/g, ' ').trim();
    }),
  );
  if (said.every((s) => s.startsWith('{false,'))) return [];
  const out: string[] = [];
  for (const [i, s] of said.entries()) {
    const n = NODES[i]!;
    if (!s.startsWith('{true,')) out.push(`${n}: no stream coordinator member running`);
    else if (!s.includes('{ok,')) out.push(`${n}: its stream coordinator member answers no membership: ${s}`);
    else {
      // {true,{ok,[{rabbit_stream_coordinator,rabbit@rabbit2}, ...],{rabbit_stream_coordinator,rabbit@rabbit2}}}: the list, then the leader.
      const list = /\{ok,\[(.*?)\]/.exec(s)?.[1] ?? '';
      const members = [...list.matchAll(/rabbit@([\w.-]+)/g)].map((m) => m[1]!);
      const missing = NODES.filter((m) => !members.includes(m));
      if (missing.length > 0) out.push(`${n}: the stream coordinator's members lack ${missing.join(', ')} (${s})`);
    }
  }
  return out;
}

/** Everything a healed fault must not leave behind: a network fault's rules and qdiscs (netLeftovers), nodeLeftovers and coordinatorLeftovers. */
export async function faultLeftovers(queue: string): Promise<string[]> {
  return [...(await netLeftovers()), ...(await nodeLeftovers(queue)), ...(await coordinatorLeftovers())];
}
