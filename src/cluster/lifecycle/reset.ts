import type { ClusterContext } from '../cluster-ctx.js';
import { loadDefinitions } from './definitions.js';
import { waitForReplicated } from './replication.js';
import type { WaitOptions } from './wait.js';

export interface ResetResult {
  hard: boolean;
  deletedQueues: string[];
  purgedQueues: { name: string; messages: number }[];
  deletedExchanges: string[];
  deletedPolicies: string[];
  elapsedMs: number;
}

/**
 * A clean state for an isolated demo, without restarting the nodes: delete queues, exchanges
 * and policies the definitions do not declare, purge the declared queues, re-apply the
 * definitions, and wait until the quorum queues are fully replicated again.
 */
export async function clusterReset(ctx: ClusterContext, options: WaitOptions): Promise<ResetResult> {
  const started = performance.now();
  const { management: m, config, progress } = ctx;
  const defs = await loadDefinitions(config.definitionsFile);
  progress.start('resetting the cluster to cluster/definitions.json');
  const vh = encodeURIComponent(config.vhost);
  const declaredQ = new Set(defs.queues.filter((q) => q.vhost === config.vhost).map((q) => q.name));
  const declaredX = new Set(defs.exchanges.filter((x) => x.vhost === config.vhost).map((x) => x.name));
  const declaredP = new Set(defs.policies.filter((p) => p.vhost === config.vhost).map((p) => p.name));

  const queues = (await m.get(`/api/queues/${vh}?disable_stats=true&enable_queue_totals=true`)) as { name: string; messages?: number }[];
  const deletedQueues: string[] = [];
  const purgedQueues: { name: string; messages: number }[] = [];
  for (const q of queues) {
    const path = `/api/queues/${vh}/${encodeURIComponent(q.name)}`;
    if (declaredQ.has(q.name)) {
      await m.request('DELETE', `${path}/contents`);
      purgedQueues.push({ name: q.name, messages: q.messages ?? 0 });
    } else {
      await m.request('DELETE', path);
      deletedQueues.push(q.name);
    }
  }
  const exchanges = (await m.get(`/api/exchanges/${vh}`)) as { name: string }[];
  const deletedExchanges: string[] = [];
  for (const x of exchanges) {
    if (x.name === '' || x.name.startsWith('amq.') || declaredX.has(x.name)) continue;
    await m.request('DELETE', `/api/exchanges/${vh}/${encodeURIComponent(x.name)}`);
    deletedExchanges.push(x.name);
  }
  const policies = (await m.get(`/api/policies/${vh}`)) as { name: string }[];
  const deletedPolicies: string[] = [];
  for (const p of policies) {
    if (declaredP.has(p.name)) continue;
    await m.request('DELETE', `/api/policies/${vh}/${encodeURIComponent(p.name)}`);
    deletedPolicies.push(p.name);
  }
  progress.update('re-applying cluster/definitions.json');
  const { readFile } = await import('node:fs/promises');
  await m.request('POST', '/api/definitions', { body: JSON.parse(await readFile(config.definitionsFile, 'utf8')) });
  await waitForReplicated(ctx, defs, options);
  progress.succeed(
    `reset: ${deletedQueues.length} queues deleted, ${purgedQueues.reduce((a, q) => a + q.messages, 0)} messages purged, ${deletedExchanges.length} exchanges and ${deletedPolicies.length} policies deleted`,
  );
  return { hard: false, deletedQueues, purgedQueues, deletedExchanges, deletedPolicies, elapsedMs: performance.now() - started };
}
