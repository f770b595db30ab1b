import { execa } from 'execa';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { closedPort, eventually, parseJson, PASSWORD, ROOT, runCli, uniqueName, USER, withChannel, MGMT, NODES, MGMT_PORTS } from './cli.js';

interface WatchJson {
  kind: string;
  answeredBy: { node: string; url: string };
  unanswered: { node: string; url: string; error: string }[];
  nodes: { name: string; running: boolean; memAlarm: boolean; diskAlarm: boolean }[];
  queues: {
    name: string;
    type: string;
    role: string;
    ready: number | null;
    unacked: number | null;
    delayed: number | null;
    leader: string | null;
    members: string[];
    online: string[];
  }[];
  alerts: { kind: string; object: string; message: string }[];
}

describe('watch', { timeout: 180_000 }, () => {
  const queue = uniqueName('watch');
  const match = `^${queue.replace(/\./g, '\\.')}$`;

  afterAll(async () => {
    await withChannel((ch) => ch.deleteQueue(queue)).catch(() => undefined);
  });

  it('--once --json reflects a message published just before', async () => {
    await withChannel(async (ch) => {
      await ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
      ch.sendToQueue(queue, Buffer.from('hello'), { persistent: true });
      await ch.waitForConfirms();
    });
    // The management API refreshes queue figures about every 5 s (measured: 4 to 9 s after the
    // confirm), so the snapshot is taken again until it shows the message.
    const doc = await eventually(
      async () => {
        const r = await runCli(['watch', '--once', '--json', '--match', match], { timeoutMs: 30_000 });
        expect(r.exitCode, r.stderr).toBe(0);
        const d = parseJson<WatchJson>(r);
        expect(d.queues.map((q) => [q.name, q.ready])).toEqual([[queue, 1]]);
        return d;
      },
      30_000,
      1_000,
    );
    expect(doc.kind).toBe('watch');
    expect(doc.answeredBy).toEqual({ node: NODES[0], url: MGMT });
    expect(doc.unanswered).toEqual([]);
    const [q] = doc.queues;
    expect(q).toMatchObject({
      type: 'quorum',
      role: 'work',
      unacked: 0,
      delayed: 0,
      members: ['rabbit1', 'rabbit2', 'rabbit3'],
      online: ['rabbit1', 'rabbit2', 'rabbit3'],
    });
    expect(['rabbit1', 'rabbit2', 'rabbit3']).toContain(q!.leader);
    expect(doc.nodes.map((n) => [n.name, n.running, n.memAlarm, n.diskAlarm])).toEqual([
      ['rabbit@rabbit1', true, false, false],
      ['rabbit@rabbit2', true, false, false],
      ['rabbit@rabbit3', true, false, false],
    ]);
    expect(doc.alerts).toEqual([]);
  });

  it('keeps working when the node it asks does not answer: asks the next, and says so (credentials masked)', async () => {
    const port = await closedPort();
    const r = await runCli([
      'watch',
      '--once',
      '--json',
      '--match',
      match,
      '--management-urls',
      `http://${USER}:${PASSWORD}@127.0.0.1:${port},http://127.0.0.1:${MGMT_PORTS[1]}`,
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const doc = parseJson<WatchJson>(r);
    expect(doc.answeredBy).toEqual({ node: `127.0.0.1:${MGMT_PORTS[1]}`, url: `http://127.0.0.1:${MGMT_PORTS[1]}` });
    expect(doc.unanswered).toEqual([expect.objectContaining({ node: `127.0.0.1:${port}`, url: `http://127.0.0.1:${port}`, error: 'ECONNREFUSED' })]);
    expect(doc.alerts.map((a) => a.kind)).toEqual(['endpoint-down']);
    expect(doc.queues.map((q) => q.name)).toEqual([queue]);
    expect(r.stdout + r.stderr).not.toContain(`${USER}:${PASSWORD}@`);
  });

  it('refreshes until Ctrl+C, one plain line per refresh on stdout off a terminal, then exits 130', async () => {
    const child = execa('node', [path.join(ROOT, 'bin', 'rmq-bench.js'), 'watch', '--interval', '500ms', '--match', match], {
      cwd: ROOT,
      env: { RMQ_BENCH_QUIET: '1' },
      reject: false,
      stdin: 'ignore',
      timeout: 60_000,
    });
    let stdout = '';
    const summary = /^\d\d:\d\d:\d\d rabbit1: nodes 3\/3 running; 1 queues, /gm;
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if ((stdout.match(summary) ?? []).length >= 3) resolve();
      });
      void child.then(() => resolve());
    });
    child.kill('SIGINT');
    const r = await child;
    expect(r.exitCode, r.stderr).toBe(130);
    // The view is the result: on stdout, none of it on stderr.
    expect(r.stderr).not.toMatch(summary);
    expect(stdout).not.toContain('\x1b['); // no redraw off a terminal
    expect(stdout.match(/^rmq-bench watch {2}\d\d:\d\d:\d\d {2}answered by rabbit1/gm)).toHaveLength(1); // the full view once, at the start
    expect((stdout.match(summary) ?? []).length).toBeGreaterThanOrEqual(3);
  });

  it('bad input: --json without --once is a usage error (exit 2, one line; stdout: the error document --json asks for)', async () => {
    const r = await runCli(['watch', '--json']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual(['rmq-bench: --json needs --once (one snapshot, one JSON document) (run rmq-bench watch --help)']);
    expect(parseJson(r)).toMatchObject({ kind: 'error', exitCode: 2, message: '--json needs --once (one snapshot, one JSON document)' });
  });
});
