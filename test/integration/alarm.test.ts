import Docker from 'dockerode';
import { execa } from 'execa';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { PublisherResult } from '../../src/client/publisher-result.js';
import { ALARM_COMMANDS } from '../../src/cluster/broker/alarms.js';
import { callNode } from '../../src/cluster/broker/erl-call.js';
import { AMQP_URLS, CONTAINERS, NODES, ROOT, alarmsOf, eventually, mgmtGet, runCli, uniqueName, withChannel } from './cli.js';
import { schemaChecked } from './schema.js';

/*
 * Resource alarms against the real cluster: rmq-bench's producer on a connection the broker
 * blocks (it waits, writes nothing, gives up at --blocked-timeout with what is unconfirmed
 * indeterminate; a confirm timeout shorter than the block does not fire), and alarm-demo's
 * clean-up on Ctrl+C. The demo's full run is the workshop's (alarm-demo.test.ts reads it).
 */

const docker = new Docker();
const node1 = CONTAINERS[0]!;
const nodeName1 = `rabbit@${NODES[0]!}`;

/** Set by raise(), unset by clear(): afterEach resets the watermark only when it may be low. */
let lowered = false;

async function raise(): Promise<void> {
  lowered = true;
  await callNode(docker, node1, nodeName1, ALARM_COMMANDS.memory.raise, 30_000);
  await eventually(async () => expect((await alarmsOf()).map((a) => a.kind)).toEqual(['memory']), 20_000, 200);
}

async function clear(): Promise<void> {
  await callNode(docker, node1, nodeName1, ALARM_COMMANDS.memory.clear, 30_000).catch((err: unknown) =>
    process.stderr.write(`could not reset the memory watermark on ${node1}: ${String(err)}\n`),
  );
  await eventually(async () => expect(await alarmsOf()).toEqual([]), 20_000, 200);
  lowered = false;
}

async function freshQueue(): Promise<string> {
  const q = uniqueName('alarm');
  await withChannel(async (ch) => {
    await ch.assertQueue(q, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  });
  return q;
}

const producerArgs = (q: string, extra: string[]): string[] => ['producer', '--queue', q, '--exchange', '', '--urls', AMQP_URLS[1]!, '--json', ...extra];

describe('a resource alarm, as rmq-bench sees it', { timeout: 180_000 }, () => {
  const queues: string[] = [];
  afterEach(async () => {
    if (lowered || (await alarmsOf()).length > 0) await clear();
    await withChannel(async (ch) => {
      for (const q of queues.splice(0)) await ch.deleteQueue(q);
    });
  });

  it('producer --blocked-timeout 2s on a connection blocked from the start: gives up (exit 68), nothing confirmed, what it wrote indeterminate, nothing republished', async () => {
    const q = await freshQueue();
    queues.push(q);
    await raise();
    // The other node's connection: alarms block publishers cluster-wide.
    const r = await runCli(producerArgs(q, ['-n', '200', '--rate', '100', '--blocked-timeout', '2s', '--confirm-timeout', '500ms']), { timeoutMs: 60_000 });
    expect(r.exitCode, r.stderr).toBe(68);
    expect(r.stderr).toMatch(
      /rmq-bench: the producer gave up after \d+ of 200 messages: the broker blocked the connection to .* \(low on memory\) for 2\.\d s, past the blocked timeout \(2000 ms\)/,
    );
    const d = schemaChecked(JSON.parse(r.stdout)) as PublisherResult;
    expect(d.blocks).toBe(1);
    expect(d.confirmed).toBe(0);
    expect(d.written).toBeGreaterThan(0);
    // A connection is blocked at its first publish during an alarm: the first message(s) went out before the notification.
    expect(d.written).toBeLessThan(200);
    expect(d.indeterminate).toBe(d.written);
    // No confirm timeout fired, though 500 ms is far shorter than the block: confirms cannot be late on a blocked connection.
    expect(d.republished).toBe(0);
    expect(d.events.map((e) => e.type)).not.toContain('confirm-timeout');
    expect(d.events.map((e) => e.type)).toContain('blocked');
    expect(d.flush).toMatchObject({ channel: 'skipped', blockedBy: 'low on memory' });
    expect(d.completed).toBe(false);
  });

  it('producer that waits out a 4 s alarm: no confirm timeout, no republish, every message confirmed and in the queue', async () => {
    const q = await freshQueue();
    queues.push(q);
    await raise();
    // A confirm timeout (2 s) shorter than the alarm (4 s): without the suspension every message in
    // flight would time out. It was 1 s: one run with five test clusters busy on two cores saw 79
    // confirm timeouts (all 300 confirmed in the end). The likely cause, not proven: what was
    // written before connection.blocked arrived is confirmed only after the unblock, within the
    // grace of one confirm timeout, and the busy broker took longer than 1 s.
    const child = execa('node', [path.join(ROOT, 'bin', 'rmq-bench.js'), ...producerArgs(q, ['-n', '300', '--rate', '100', '--confirm-timeout', '2s'])], {
      reject: false,
      env: { RMQ_BENCH_QUIET: '0' },
    });
    let stderr = '';
    child.stderr?.on('data', (c: Buffer) => {
      stderr += String(c);
    });
    await eventually(async () => expect(stderr).toContain('blocked:'), 30_000, 100);
    await new Promise((r) => setTimeout(r, 4_000));
    await clear();
    const r = await child;
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const d = schemaChecked(JSON.parse(String(r.stdout))) as PublisherResult;
    expect(d.completed).toBe(true);
    expect(d.confirmed).toBe(300);
    expect(d.indeterminate).toBe(0);
    expect(d.republished).toBe(0);
    expect(d.blocks).toBe(1);
    expect(d.events.map((e) => e.type)).toEqual(['connected', 'blocked', 'unblocked']);
    expect(d.flush).toMatchObject({ channel: 'closed', blockedBy: null });
    // The status line said why it was waiting.
    expect(String(r.stderr)).toMatch(/blocked: amqp:\/\/demo:\*\*\*@127\.0\.0\.1:\d+: low on memory/);
    await eventually(async () => expect((await mgmtGet<{ messages?: number }>(`/api/queues/%2F/${q}`)).messages).toBe(300), 30_000);
  });

  it('producer --confirms=false stopped with SIGTERM while blocked: exits 143 (128 + SIGTERM) on its own, and says it could not flush', async () => {
    const q = await freshQueue();
    queues.push(q);
    await raise();
    const child = execa(
      'node',
      [path.join(ROOT, 'bin', 'rmq-bench.js'), ...producerArgs(q, ['-n', '1000', '--rate', '100', '--confirms=false', '--flush-timeout', '1s'])],
      {
        reject: false,
        env: { RMQ_BENCH_QUIET: '0' },
        // A hang here is the defect under test: it would be killed and fail the exit-code assertion.
        timeout: 30_000,
      },
    );
    let stderr = '';
    child.stderr?.on('data', (c: Buffer) => {
      stderr += String(c);
    });
    await eventually(async () => expect(stderr).toContain('blocked:'), 30_000, 100);
    child.kill('SIGTERM');
    const r = await child;
    expect(r.timedOut).toBe(false);
    expect(r.exitCode, String(r.stderr)).toBe(143);
    const d = schemaChecked(JSON.parse(String(r.stdout))) as PublisherResult;
    expect(d.interrupted).toBe(true);
    expect(d.flush).toMatchObject({ channel: 'timeout', blockedBy: 'low on memory' });
    expect(String(r.stderr)).toContain('not flushed: the broker did not confirm reading everything (the connection was blocked by the broker (low on memory))');
    // What became of the rest is not the producer's to know, and varies: its first message was read
    // (the broker blocks a connection at its first publish), the others sat in the broker's socket
    // buffer when the process exited. They arrive when the alarm clears, unless the broker wrote to
    // the closed socket first (a heartbeat): the reset that answers it discards them (seen: 1 of 5 arrived).
    await clear();
    // At least the first one arrives once the alarm is gone (waited for, not slept on: the broker
    // unblocks within seconds of the clear, later on a busy machine).
    const arrived = await eventually(
      async () => {
        const n = await withChannel(async (ch) => (await ch.checkQueue(q)).messageCount);
        expect(n).toBeGreaterThanOrEqual(1);
        return n;
      },
      30_000,
      250,
    );
    expect(arrived).toBeLessThanOrEqual(d.written);
  });

  it('alarm-demo, Ctrl+C during the alarm: exit 130, the alarm cleared, the queue deleted, no child left', async () => {
    const child = execa(
      'node',
      [path.join(ROOT, 'bin', 'rmq-bench.js'), 'alarm-demo', '--auto', '--hold', '60s', '--blocked-timeout', '3s', '--kill-after', '30s'],
      {
        reject: false,
        env: { RMQ_BENCH_QUIET: '0' },
      },
    );
    let stderr = '';
    child.stderr?.on('data', (c: Buffer) => {
      stderr += String(c);
    });
    await eventually(async () => expect(stderr).toMatch(/memory alarm on rabbit1 reported/), 60_000, 100);
    expect((await alarmsOf()).map((a) => a.kind)).toEqual(['memory']);
    // Its own two producer children, by parent pid: another shard may run an alarm-demo at the same time.
    let kids: number[] = [];
    await eventually(
      async () => {
        const p = await execa('pgrep', ['-P', String(child.pid)], { reject: false });
        kids = p.stdout.split(/\s+/).filter(Boolean).map(Number);
        expect(kids.length).toBeGreaterThanOrEqual(2);
      },
      20_000,
      100,
    );
    child.kill('SIGINT');
    const r = await child;
    expect(r.exitCode, String(r.stderr)).toBe(130);
    expect(await alarmsOf()).toEqual([]);
    const names = (await mgmtGet<{ name: string }[]>('/api/queues?columns=name')).map((x) => x.name);
    expect(names).not.toContain('rmq-bench.alarm-demo');
    // The two producer children were killed with it: no connection of theirs is left.
    await eventually(async () => {
      const conns = await mgmtGet<{ client_properties?: { connection_name?: string } }[]>('/api/connections');
      expect(conns.filter((c) => /alarm-demo/.test(c.client_properties?.connection_name ?? ''))).toEqual([]);
    }, 30_000);
    const alive = (pid: number): boolean => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await eventually(async () => expect(kids.filter(alive)).toEqual([]), 10_000, 100);
  });
});
