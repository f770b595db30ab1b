import { mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseJson, runCli, uniqueName } from './cli.js';
import { expectClusterWhole, useQuorumQueue } from './fixtures.js';
import { newWitnessFile, witnessAt, witnessCommand, witnessLines } from './witness.js';

/*
 * What a CI job gets: a confirms-off compare under a leader kill, held to --max-lost 0, must fail
 * (exit 1) and say so in its JUnit file, with the number. 50,000 messages as fast as they go keep
 * the producer writing after the kill lands, so the killed leader dies with thousands of them
 * unreplicated every time (producer.test.ts: with 20,000 a loaded machine once lost nothing; one
 * run here lost 15,999 of 50,000). The count in the failure is checked against the broker's own
 * count before the drain (the tests' witness, plain amqplib): the messages sent less those the
 * queue held.
 */

const N = 50_000;
const queue = uniqueName('thresholds');

interface CompareDoc {
  ok: boolean;
  runs: { producer: { written: number }; reconciliation: { silentlyLost: number; lost: number; duplicated: number } }[];
  thresholds: { ok: boolean; checks: { name: string; flag: string; limit: number; value: number; ok: boolean; message: string }[] };
}

describe('compare --confirms off --max-lost 0 --junit', { timeout: 300_000 }, () => {
  useQuorumQueue(queue);

  it('exits 1; the JUnit file fails --max-lost with the number the broker agrees with', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rmq-bench-junit-'));
    const junit = path.join(dir, 'out.xml');
    const out = await newWitnessFile();
    const r = await runCli([
      'compare',
      '--confirms',
      'off',
      '--queue',
      queue,
      '-n',
      String(N),
      '--fault',
      'kill',
      '--checkpoint-cmd',
      witnessCommand(out, { queue }),
      '--max-lost',
      '0',
      '--junit',
      junit,
      '--json',
    ]);
    expect(r.exitCode, r.stderr).toBe(1);
    const doc = parseJson<CompareDoc>(r);
    const run = doc.runs[0]!;
    expect(run.producer.written, 'the producer reported every message sent').toBe(N);
    const held = witnessAt(witnessLines(out), 'before-drain', 'confirms-off', queue).messages;
    expect(held, 'the broker holds fewer than were sent').toBeLessThan(N);
    const lost = N - held;

    // The document: its verdict fails with the threshold, the check holding the same number.
    expect(doc.ok).toBe(false);
    expect(doc.thresholds.checks).toEqual([{ name: 'lost', flag: '--max-lost', limit: 0, value: lost, ok: false, message: `lost ${lost} > --max-lost 0` }]);
    expect(r.stderr).toContain(`thresholds: FAILED (lost ${lost} > --max-lost 0)`);

    // The JUnit file: the verdict (confirms off claims nothing: passed) and --max-lost, failed with the number.
    const xml = await readFile(junit, 'utf8');
    expect(xml).toMatch(/<testsuite name="rmq-bench compare" tests="2" failures="1" errors="0" skipped="0">/);
    expect(xml).toContain('<testcase classname="rmq-bench.compare" name="verdict"/>');
    expect(xml).toContain(`<testcase classname="rmq-bench.compare" name="--max-lost">\n      <failure message="lost ${lost} &gt; --max-lost 0"`);

    await expectClusterWhole(queue);
  });
});
