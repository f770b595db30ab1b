import { describe, expect, it } from 'vitest';
import { mgmtGet, parseJson, runCli } from './cli.js';
import { COMPARE_STREAM, type CompareJson, type CompareRunJson, confirmedKept, confirmedKeptByTheBroker, streamCompareArgv } from './compare-checks.js';
import { distinct, newWitnessFile, seqsOf, witnessAt, witnessLines } from './witness.js';

/*
 * A stream under a kill of its writer, and under the loss of its majority (the writer and a
 * replica killed: nothing is confirmed until both are back), published over RabbitMQ's native
 * stream protocol: `compare --queue-type stream --protocol stream`. The producer reaches the nodes
 * on their published stream ports, is sent to the leader by the host and port each node
 * advertises, and after the fault finds the writer the same way. Before rmq-bench reads the stream, the tests'
 * witness (queue-witness.mjs --stream: plain amqplib, x-stream-offset first, prefetch, manual
 * acks; no code of rmq-bench) reads it from its first offset: every confirmed message is there by
 * the broker's ids, once each (what was sent again with the same publishing id was dropped by the
 * broker's deduplication), and rmq-bench read exactly what the broker delivered. Heavy tier
 * (shard j).
 */

const N = 3000;
const STREAM = COMPARE_STREAM;

interface StreamRunJson extends CompareRunJson {
  producer: CompareRunJson['producer'] & {
    connectedTo: string[];
    stream?: {
      publisherRef: string;
      confirms: number;
      errors: number;
      inDoubtResent: number;
      resentOnReconnect: number;
      storedAlready: number;
      timedOut: number;
      sessions: number;
    };
  };
}

const FAULTS = [
  { fault: 'kill', elected: true },
  // No majority of replicas until both nodes are back: no writer is elected while it lasts.
  { fault: 'quorum-loss', elected: false },
] as const;

describe('streams over the native protocol: compare --protocol stream under faults of the writer (witnessed)', { timeout: 900_000 }, () => {
  it.each(FAULTS)(
    '$fault: the writer found through the advertised ports; no confirmed message lost; no copy of any in the stream; the stream removed after',
    async ({ fault, elected }) => {
      const out = await newWitnessFile();
      const r = await runCli(streamCompareArgv('stream', N, out, fault), { timeoutMs: 420_000 });
      expect(r.exitCode, r.stderr).toBe(0);
      const c = parseJson<CompareJson & { runs: StreamRunJson[] }>(r);
      expect(c.runs.map((x) => x.mode)).toEqual(['stream-confirms']);
      const run = c.runs[0]!;
      const w = witnessAt(witnessLines(out), 'before-drain', 'stream-confirms', STREAM);

      expect(run.fault?.kind).toBe(fault);
      confirmedKept(run, N, { elected });
      confirmedKeptByTheBroker(run, w, N);

      // Deduplication, by the broker's own deliveries: each id once in the stream, whatever was sent again.
      const { seqs } = seqsOf(w.ids!, run.runId);
      expect(w.messages, 'the stream holds each message once').toBe(distinct(seqs));
      expect(run.reconciliation.duplicated).toBe(0);

      // The producer lost the writer's connection and published on through a new session.
      const s = run.producer.stream!;
      expect(s.publisherRef).toBe(`rmq-bench-${run.runId}`);
      expect(run.producer.reconnects).toBeGreaterThanOrEqual(1);
      expect(s.sessions).toBe(run.producer.reconnects + 1);
      expect(run.producer.connectedTo.every((u) => u.startsWith('rabbitmq-stream://'))).toBe(true);
      expect(s.errors).toBe(0);
      // Every publishing id confirmed at least once; what was sent again was confirmed again (stored or dropped).
      expect(s.confirms).toBeGreaterThanOrEqual(N);
      // What the new session sent again first: at least the connection's in-doubt messages; what the broker held of them, at most all.
      expect(s.resentOnReconnect).toBeGreaterThanOrEqual(s.inDoubtResent);
      expect(s.storedAlready).toBeLessThanOrEqual(s.resentOnReconnect);

      const queues = await mgmtGet<{ name: string }[]>('/api/queues/%2F');
      expect(queues.map((q) => q.name)).not.toContain(STREAM);
    },
  );
});
