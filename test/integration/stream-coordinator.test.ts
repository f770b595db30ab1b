import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { CONTAINERS, MGMT_PORTS, NODES, PASSWORD, USER, eventually, parseJson, runCli, uniqueName } from './cli.js';

/*
 * A stream coordinator member that never starts again: the state a node killed within about half
 * a second of its member starting comes back in (Ra's directory had not saved the member's name;
 * bench/stream-coordinator-kill.mjs reproduces that kill). Planted here without the race: the
 * member stopped and its name removed from Ra's directory on rabbit2, then rabbit2 killed and
 * started again. Every check of the state is the test's own: rabbitmqctl in the node's container,
 * and the management API of that node, never rmq-bench's code. Heavy tier (shard j).
 */

const NODE = 1; // rabbit2
const container = CONTAINERS[NODE]!;
const nodeName = `rabbit@${NODES[NODE]}`;

/** What rabbitmqctl eval prints on the node. */
async function evalOn(c: string, expr: string): Promise<string> {
  const r = await execa('docker', ['exec', c, 'rabbitmqctl', '-q', 'eval', expr], { reject: false, timeout: 60_000 });
  if (r.exitCode !== 0) throw new Error(`rabbitmqctl eval on ${c} exited ${r.exitCode}: ${r.stderr || r.stdout}`);
  return r.stdout.trim();
}

/** The node's member: running (a pid) and registered (in Ra's directory), as `{Running, Registered}`. */
const memberState = (c: string): Promise<string> =>
  evalOn(c, '{is_pid(whereis(rabbit_stream_coordinator)), lists:keymember(rabbit_stream_coordinator, 1, ra_directory:list_registered(coordination))}.');

/** A stream's members online by the management API of one node. */
async function onlineOn(port: number, stream: string): Promise<string[]> {
  const res = await fetch(`http://127.0.0.1:${port}/api/queues/%2F/${encodeURIComponent(stream)}`, {
    headers: { authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}` },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { online?: string[] }).online ?? [];
}

async function declareStream(port: number, stream: string): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${port}/api/queues/%2F/${encodeURIComponent(stream)}`, {
    method: 'PUT',
    headers: { authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`, 'content-type': 'application/json' },
    body: JSON.stringify({ durable: true, arguments: { 'x-queue-type': 'stream' } }),
    signal: AbortSignal.timeout(60_000),
  });
  expect([201, 204]).toContain(res.status);
}

async function deleteStream(stream: string): Promise<void> {
  await fetch(`http://127.0.0.1:${MGMT_PORTS[0]}/api/queues/%2F/${encodeURIComponent(stream)}`, {
    method: 'DELETE',
    headers: { authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}` },
  });
}

describe('the stream coordinator: a member that never started again after a kill', { timeout: 300_000 }, () => {
  it('cluster status names it; cluster up removes it and the coordinator adds it back; a stream written on that node then has every member online', async () => {
    const stream = uniqueName('coordinator');
    const led = uniqueName('coordinator-led');
    try {
      // A stream declared, so that the coordinator exists on every node.
      await declareStream(MGMT_PORTS[0]!, stream);
      await eventually(async () => expect(await memberState(container)).toBe('{true,true}'), 60_000, 1_000);

      // The plant. Ra's directory saves a change within a second; the kill comes after it.
      await evalOn(
        container,
        'UId = ra_directory:uid_of(coordination, rabbit_stream_coordinator), ok = ra:stop_server(coordination, {rabbit_stream_coordinator, node()}), ra_directory:unregister_name(coordination, UId).',
      );
      await new Promise((r) => setTimeout(r, 3_000));
      await execa('docker', ['kill', '-s', 'KILL', container]);
      await execa('docker', ['start', container]);
      await eventually(async () => expect(await evalOn(container, 'rabbit:is_running().')).toBe('true'), 120_000, 2_000);

      // The state, by the node itself: its member neither runs nor is registered, and stays so. A
      // stream declared through that node has its writer there (client-local), and the management
      // API shows none of its members online (the writer's node asks its own member).
      await new Promise((r) => setTimeout(r, 10_000));
      expect(await memberState(container)).toBe('{false,false}');
      await declareStream(MGMT_PORTS[NODE]!, led);
      await new Promise((r) => setTimeout(r, 6_000)); // the statistics interval is 5 s
      expect(await onlineOn(MGMT_PORTS[NODE]!, led)).toEqual([]);

      const status = parseJson<{ streamCoordinator: { stranded: string[]; majority: boolean } }>(await runCli(['cluster', 'status', '--json']));
      expect(status.streamCoordinator).toMatchObject({ stranded: [nodeName], majority: true });

      const up = await runCli(['cluster', 'up', '--json'], { timeoutMs: 240_000 });
      expect(up.exitCode, up.stderr).toBe(0);
      expect(parseJson<{ streamCoordinatorAddedBack: string[] }>(up).streamCoordinatorAddedBack).toEqual([NODES[NODE]]);

      // Repaired, by the node itself and by its management API.
      expect(await memberState(container)).toBe('{true,true}');
      await eventually(async () => expect((await onlineOn(MGMT_PORTS[NODE]!, led)).sort()).toEqual(NODES.map((n) => `rabbit@${n}`).sort()), 30_000, 1_000);
      const after = parseJson<{ streamCoordinator: { stranded: string[] } }>(await runCli(['cluster', 'status', '--json']));
      expect(after.streamCoordinator.stranded).toEqual([]);
    } finally {
      await deleteStream(stream);
      await deleteStream(led);
    }
  });
});
