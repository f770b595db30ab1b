import { afterAll, beforeAll, expect } from 'vitest';
import { parseJson, runCli, withChannel } from './cli.js';

/** Within a describe: the quorum queue `queue` is declared before its tests and deleted after them. */
export function useQuorumQueue(queue: string): void {
  beforeAll(async () => {
    await withChannel((ch) => ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } }));
  });
  afterAll(async () => {
    await withChannel((ch) => ch.deleteQueue(queue)).catch(() => undefined);
  });
}

/** After a restored fault, as `cluster status --json` sees it: all 3 nodes run, and every member of `queue` is online. */
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
}
