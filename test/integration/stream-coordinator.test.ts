import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { CONTAINERS, MGMT_PORTS, NODES, PASSWORD, USER, eventually, parseJson, runCli, uniqueName } from './cli.js';

/*
 * The stream coordinator's members, broken the two ways seen here, and made whole by cluster up.
 * - Stranded: the state a node killed within about half a second of its member starting comes
 *   back in (Ra's directory had not saved the member's name; bench/stream-coordinator-kill.mjs
 *   reproduces that kill). Planted without the race: the member stopped and its name removed from
 *   Ra's directory on rabbit2, then rabbit2 killed and started again.
 * - Outside: a member the coordinator removed while it could not hear of it, running on with its
 *   old membership; beside a stranded member, no majority is left.
 * Every check of the state is the test's own: rabbitmqctl in the nodes' containers, and a node's
 * management API, never rmq-bench's code. Heavy tier (shard j).
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

/** Clean-up: never throws (a failure here must not hide the test's own). */
async function deleteStream(stream: string): Promise<void> {
  await fetch(`http://127.0.0.1:${MGMT_PORTS[0]}/api/queues/%2F/${encodeURIComponent(stream)}`, {
    method: 'DELETE',
    headers: { authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}` },
    signal: AbortSignal.timeout(60_000),
  }).catch((err: unknown) => console.error(`could not delete stream ${stream}: ${String(err)}`));
}

/** Each node's member runs, is registered, and lists every node: the coordinator is whole before the plant. */
async function expectCoordinatorWhole(): Promise<void> {
  const members = `[${NODES.map((n) => `rabbit@${n}`)
    .sort()
    .join(',')}]`;
  for (const c of CONTAINERS) {
    const printed = await evalOn(
      c,
      'Id = {rabbit_stream_coordinator, node()}, {ok, Ms, _} = ra:members({local, Id}), io:format("~w~n", [{is_pid(whereis(rabbit_stream_coordinator)), lists:sort([N || {_, N} <- Ms])}]).',
    );
    expect(printed.split('\n')[0], `${c}: its coordinator member before the plant`).toBe(`{true,${members}}`);
  }
}

/**
 * The state a kill within a second of the member's start leaves, on the node of container `c`:
 * its member stopped and its name removed from Ra's directory (saved within a second), then the
 * node killed and started again.
 */
async function strand(c: string): Promise<void> {
  await evalOn(
    c,
    'UId = ra_directory:uid_of(coordination, rabbit_stream_coordinator), ok = ra:stop_server(coordination, {rabbit_stream_coordinator, node()}), ra_directory:unregister_name(coordination, UId).',
  );
  await new Promise((r) => setTimeout(r, 3_000));
  await execa('docker', ['kill', '-s', 'KILL', c]);
  await execa('docker', ['start', c]);
  await eventually(async () => expect(await evalOn(c, 'rabbit:is_running().')).toBe('true'), 120_000, 2_000);
}

describe('the stream coordinator: members a kill or a forget left behind', { timeout: 300_000 }, () => {
  it('cluster status names it; cluster up removes it and the coordinator adds it back; a stream written on that node then has every member online', async () => {
    const stream = uniqueName('coordinator');
    const led = uniqueName('coordinator-led');
    try {
      // A stream declared, so that the coordinator exists on every node.
      await declareStream(MGMT_PORTS[0]!, stream);
      await eventually(async () => expect(await memberState(container)).toBe('{true,true}'), 60_000, 1_000);
      await eventually(expectCoordinatorWhole, 60_000, 2_000);

      await strand(container);

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
      expect(parseJson<{ streamCoordinatorRepairs: string[] }>(up).streamCoordinatorRepairs).toEqual([
        `the stream coordinator's member on ${NODES[NODE]} never started again after a kill: removed, for the coordinator to add it afresh`,
      ]);

      // Repaired, by the node itself and by its management API.
      expect(await memberState(container)).toBe('{true,true}');
      await expectCoordinatorWhole();
      await eventually(async () => expect((await onlineOn(MGMT_PORTS[NODE]!, led)).sort()).toEqual(NODES.map((n) => `rabbit@${n}`).sort()), 30_000, 1_000);
      const after = parseJson<{ streamCoordinator: { stranded: string[] } }>(await runCli(['cluster', 'status', '--json']));
      expect(after.streamCoordinator.stranded).toEqual([]);
    } finally {
      // The plant undone whatever happened above: the next test files of the shard declare streams.
      const up = await runCli(['cluster', 'up'], { timeoutMs: 240_000 });
      if (up.exitCode !== 0) console.error(`cluster up after the plant: exit ${up.exitCode}: ${up.stderr}`);
      await deleteStream(stream);
      await deleteStream(led);
    }
  });
  it('a member outside the coordinator beside a stranded one, so no majority: status names both; up deletes the outsider, forces the coordinator down to the last member, and it adds the others back', async () => {
    const stream = uniqueName('coordinator-split');
    const outsider = CONTAINERS[0]!; // rabbit1
    const outsiderNode = `rabbit@${NODES[0]}`;
    const survivor = CONTAINERS[2]!; // rabbit3
    try {
      await declareStream(MGMT_PORTS[2]!, stream);
      await eventually(expectCoordinatorWhole, 60_000, 2_000);
      // rabbit1's member stopped, removed from the coordinator through rabbit3 while it cannot
      // hear of it, and started again: it runs with its old membership, outside the coordinator
      // (what a node forgotten while the coordinator could not record it keeps).
      await evalOn(outsider, 'ok = ra:stop_server(coordination, {rabbit_stream_coordinator, node()}).');
      const removed = await evalOn(
        survivor,
        `{ok, _, L} = ra:members({local, {rabbit_stream_coordinator, node()}}), io:format("~w~n", [ra:remove_member(L, {rabbit_stream_coordinator, '${outsiderNode}'})]).`,
      );
      expect(removed.split('\n')[0]).toMatch(/^\{ok,/);
      await evalOn(outsider, 'ok = ra:restart_server(coordination, {rabbit_stream_coordinator, node()}).');
      // rabbit2 stranded: the coordinator's two members are rabbit2 and rabbit3, one running.
      await strand(container);
      await new Promise((r) => setTimeout(r, 5_000));
      expect(await memberState(outsider)).toBe('{true,true}');
      expect(await memberState(container)).toBe('{false,false}');

      const status = parseJson<{ streamCoordinator: { stranded: string[]; outside: string[]; majority: boolean } }>(
        await runCli(['cluster', 'status', '--json']),
      );
      expect(status.streamCoordinator).toMatchObject({ stranded: [nodeName], outside: [outsiderNode], majority: false });

      const up = await runCli(['cluster', 'up', '--json'], { timeoutMs: 240_000 });
      expect(up.exitCode, up.stderr).toBe(0);
      expect(parseJson<{ streamCoordinatorRepairs: string[] }>(up).streamCoordinatorRepairs).toEqual([
        `the stream coordinator's member on ${NODES[0]} ran outside the coordinator (its node was forgotten while the coordinator could not record it): deleted, for the coordinator to add it afresh`,
        `the stream coordinator has no majority (${NODES[NODE]} not running as members): forced down to its member on ${NODES[2]}, which adds the others afresh; what it had not copied is lost`,
      ]);
      await expectCoordinatorWhole();
      // Streams work again: one declared through the stranded node gets every member online.
      const again = `${stream}-again`;
      try {
        await declareStream(MGMT_PORTS[NODE]!, again);
        await eventually(async () => expect((await onlineOn(MGMT_PORTS[NODE]!, again)).sort()).toEqual(NODES.map((n) => `rabbit@${n}`).sort()), 30_000, 1_000);
      } finally {
        await deleteStream(again);
      }
    } finally {
      const up = await runCli(['cluster', 'up'], { timeoutMs: 240_000 });
      if (up.exitCode !== 0) console.error(`cluster up after the plant: exit ${up.exitCode}: ${up.stderr}`);
      await deleteStream(stream);
    }
  });
});
