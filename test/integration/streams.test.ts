import { describe, expect, it } from 'vitest';
import { mgmtGet, parseJson, runCli } from './cli.js';
import { COMPARE_STREAM, type CompareJson, confirmedKept, confirmedKeptByTheBroker, streamCompareArgv } from './compare-checks.js';
import { distinct, newWitnessFile, seqsOf, witnessAt, witnessLines } from './witness.js';

/*
 * A stream under a kill of its writer (the leader): `compare --queue-type stream` over AMQP 0-9-1
 * and over AMQP 1.0, on the stream compare declares afresh for each run. Before rmq-bench reads
 * it, the tests' witness (queue-witness.mjs --stream, plain amqplib, no code of rmq-bench) reads
 * the stream from its first offset: every confirmed (accepted) message is there by the broker's
 * ids, rmq-bench read exactly what the broker delivered, and the unconfirmed run's silent loss is
 * exactly what the broker does not hold. Heavy tier (shard j).
 */

const N = 3000;
const STREAM = COMPARE_STREAM;

describe('streams: compare --queue-type stream under a kill of the writer (witnessed)', { timeout: 900_000 }, () => {
  it.each([
    { protocol: 'amqp091', modes: ['confirms-on', 'confirms-off'] },
    { protocol: 'amqp10', modes: ['amqp10-outcomes', 'amqp10-presettled'] },
  ])(
    '$protocol: a new writer elected; no confirmed message lost by the broker; the unconfirmed side loses exactly what the broker never held; the stream removed after',
    async ({ protocol, modes }) => {
      const out = await newWitnessFile();
      const r = await runCli(streamCompareArgv(protocol, N, out), { timeoutMs: 420_000 });
      expect(r.exitCode, r.stderr).toBe(0);
      const c = parseJson<CompareJson>(r);
      expect(c.runs.map((x) => x.mode)).toEqual(modes);
      const lines = witnessLines(out);
      const [on, off] = c.runs;

      confirmedKept(on!, N, { elected: true });
      confirmedKeptByTheBroker(on!, witnessAt(lines, 'before-drain', modes[0]!, STREAM), N);

      const w = witnessAt(lines, 'before-drain', modes[1]!, STREAM);
      const { seqs, foreign } = seqsOf(w.ids!, off!.runId);
      expect(foreign, 'the stream of this run holds this run only').toEqual([]);
      expect(off!.fault?.error ?? null).toBeNull();
      expect(off!.producer.written, 'the producer reported every message sent').toBe(N);
      expect(off!.reconciliation.counts.confirmed).toBe(0);
      expect(off!.drain.deliveries, "rmq-bench's read, the broker's deliveries").toBe(w.messages);
      expect(off!.reconciliation.counts.readDistinct).toBe(distinct(seqs));
      expect(off!.reconciliation.silentlyLost).toBe(N - distinct(seqs));
      expect(off!.reconciliation.counts.unexpected).toBe(0);

      const queues = await mgmtGet<{ name: string }[]>('/api/queues/%2F');
      expect(queues.map((q) => q.name)).not.toContain(STREAM);
    },
  );
});
