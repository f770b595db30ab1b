import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { AMQP_URLS, parseJson, runCli, uniqueName } from './cli.js';
import { type CompareJson, type CompareRunJson, confirmedKept, confirmedKeptByTheBroker, faultHealed, compareArgv } from './compare-checks.js';
import { expectClusterWhole, useQuorumQueue } from './fixtures.js';
import { distinct, seqsOf, witnessAt, newWitnessFile, witnessLines } from './witness.js';

/*
 * The producer over AMQP 1.0 (rhea), counted by the broker: under a leader kill no accepted
 * message is lost (the tests' witness reads the queue before rmq-bench drains it), pre-settled
 * sends lose what the broker never took and rmq-bench calls exactly that silently lost, and an
 * unroutable transfer comes back released, as the broker's own counter says.
 */

interface Outcomes {
  settlement: string;
  accepted: number;
  released: number;
  rejected: number;
  modified: number;
  inDoubt: number;
  timedOut: number;
}

type Run10 = CompareRunJson & { producer: CompareRunJson['producer'] & { publishes: number; amqp10: Outcomes } };

const queue = uniqueName('amqp10');
const N = 3000;

describe('AMQP 1.0 under a leader kill (compare --protocol amqp10)', { timeout: 300_000 }, () => {
  useQuorumQueue(queue);

  it('outcomes: no accepted message lost, by the broker; pre-settled: silently lost is exactly what the broker never held', async () => {
    const out = await newWitnessFile();
    const r = await runCli(compareArgv({ queue, n: N, protocol: 'amqp10', fault: 'kill', witnessOut: out }));
    expect(r.exitCode, r.stderr).toBe(0);
    const c = parseJson<CompareJson>(r);
    expect(c.runs.map((x) => x.mode)).toEqual(['amqp10-outcomes', 'amqp10-presettled']);
    expect(c.ok).toBe(true);
    const lines = witnessLines(out);

    const on = c.runs[0] as Run10;
    confirmedKept(on, N);
    confirmedKeptByTheBroker(on, witnessAt(lines, 'before-drain', 'amqp10-outcomes', queue), N);
    faultHealed(on, 'kill');
    const o = on.producer.amqp10;
    expect(o.settlement).toBe('on-outcome');
    // Each message accepted once: a transfer in doubt (its connection lost) has no outcome and is
    // sent again, a refused one is counted apart. Only a timed-out transfer, sent again, can also be
    // accepted late, and counts twice.
    if (o.timedOut === 0 && o.released + o.rejected + o.modified === 0) expect(o.accepted, 'nothing refused, nothing timed out').toBe(N);
    else {
      expect(o.accepted).toBeGreaterThanOrEqual(N);
      expect(o.accepted).toBeLessThanOrEqual(N + o.timedOut);
    }
    // Every transfer ended in one outcome, or in doubt (a timed-out one may still be accepted late: counted twice).
    const ended = o.accepted + o.released + o.rejected + o.modified + o.inDoubt + o.timedOut;
    if (o.timedOut === 0) expect(ended).toBe(on.producer.publishes);
    else expect(ended).toBeGreaterThanOrEqual(on.producer.publishes);

    const off = c.runs[1] as Run10;
    const w = witnessAt(lines, 'before-drain', 'amqp10-presettled', queue);
    const { seqs, foreign } = seqsOf(w.ids!, off.runId);
    expect(foreign).toEqual([]);
    // Every id one the producer meant to send: below N.
    expect(seqs.filter((x) => x >= N)).toEqual([]);
    expect(off.producer.amqp10.settlement).toBe('pre-settled');
    expect(off.producer.written, 'the producer reported every message sent').toBe(N);
    expect(off.reconciliation.counts.confirmed).toBe(0);
    expect(off.reconciliation.counts.readDistinct).toBe(distinct(seqs));
    expect(off.reconciliation.silentlyLost).toBe(N - distinct(seqs));
    // The claim: pre-settled transfers are lost under a leader kill, and nobody is told. Three runs
    // of this compare tried here each lost some (276, 365 and 482 of 3,000).
    expect(off.reconciliation.silentlyLost).toBeGreaterThan(0);
    expect(off.reconciliation.lost).toBe(0);
    faultHealed(off, 'kill');

    await expectClusterWhole(queue);
  });
});

/** One of the first node's global counters, read from its Prometheus endpoint (this cluster publishes that node's). */
async function counter(metric: string): Promise<number> {
  const config = loadConfig(process.env);
  const text = await (await fetch(`http://127.0.0.1:${config.prometheusPort}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
  const line = text.split('\n').find((l) => l.startsWith(`${metric} `));
  expect(line, `${metric} in /metrics`).toBeDefined();
  return Number(line!.slice(metric.length).trim());
}

describe("AMQP 1.0: the producer's outcome counts against the broker's own counters", () => {
  const routable = uniqueName('amqp10-counters');
  useQuorumQueue(routable);

  it('every transfer received and accepted, as the node counts them per protocol', async () => {
    const received = 'rabbitmq_global_messages_received_confirm_total{protocol="amqp10"}';
    const confirmed = 'rabbitmq_global_messages_confirmed_total{protocol="amqp10"}';
    const before = { received: await counter(received), confirmed: await counter(confirmed) };
    // The default exchange: routed to the queue by its name.
    const r = await runCli([
      'producer',
      '--protocol',
      'amqp10',
      '--urls',
      AMQP_URLS[0]!,
      '--exchange',
      '',
      '--queue',
      routable,
      '-n',
      '500',
      '--rate',
      '0',
      '--json',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const doc = parseJson<{ publishes: number; confirmed: number; amqp10: Outcomes }>(r);
    expect(doc.amqp10.accepted).toBe(500);
    expect(doc.confirmed).toBe(500);
    // Nothing else publishes over AMQP 1.0 to this node meanwhile: the files of a shard run one at a time.
    expect(await counter(received)).toBe(before.received + doc.publishes);
    expect(await counter(confirmed)).toBe(before.confirmed + doc.amqp10.accepted);
  });
});

describe('AMQP 1.0: an unroutable transfer', () => {
  it("comes back released: the producer counts each one, and the broker's own counter agrees", async () => {
    // The one node the producer talks to is the one whose Prometheus endpoint this cluster publishes.
    const metric = 'rabbitmq_global_messages_unroutable_returned_total{protocol="amqp10"}';
    const returned = (): Promise<number> => counter(metric);
    const before = await returned();
    const r = await runCli([
      'producer',
      '--protocol',
      'amqp10',
      '--urls',
      AMQP_URLS[0]!,
      '--routing-key',
      uniqueName('nowhere'),
      '-n',
      '40',
      '--rate',
      '0',
      '--json',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const doc = parseJson<{ confirmed: number; returned: number; amqp10: Outcomes }>(r);
    expect(await returned()).toBe(before + 40);
    expect(doc.amqp10.released).toBe(40);
    expect(doc.amqp10.accepted).toBe(0);
    expect(doc.returned).toBe(40);
    expect(doc.confirmed).toBe(0);
  });
});
