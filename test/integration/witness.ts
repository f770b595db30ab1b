import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { AMQP_URLS, ROOT } from './cli.js';

/**
 * The tests' own count of a queue, independent of rmq-bench: queue-witness.mjs (plain amqplib,
 * no code shared with src/), run by rmq-bench at a checkpoint of its run (--checkpoint-cmd)
 * before rmq-bench reads the queue itself. What it records is the broker's count, and with
 * --peek every message id the broker holds.
 */

export interface WitnessLine {
  checkpoint: string | null;
  mode: string | null;
  run: number | null;
  /** The queue it counted: --queue when given, else the one rmq-bench's checkpoint named. */
  queue: string;
  /** The queue rmq-bench's checkpoint named (RMQ_BENCH_CHECKPOINT_QUEUE), or null when it named none. */
  announced: string | null;
  /** The broker's count (queue.declare passive). */
  messages: number;
  /** --peek: every message id delivered (a copy per message held, duplicates included). */
  ids: string[] | null;
  /** --peek: beside each id, its x-first-death-reason header (null when it has none). */
  firstDeathReasons: (string | null)[] | null;
}

const SCRIPT = path.join(ROOT, 'test', 'integration', 'queue-witness.mjs');

/** A fresh file for the witness's lines (in a new temporary folder). */
export async function newWitnessFile(): Promise<string> {
  return path.join(await mkdtemp(path.join(os.tmpdir(), 'rmq-bench-it-')), 'witness.jsonl');
}

/**
 * The --checkpoint-cmd that appends the witness's line to `out`. With `queue`, the witness counts
 * that queue whatever the checkpoint names (and records what it named); without, the queue the
 * checkpoint names (runs over several queues, or queues rmq-bench names itself). `stream`: the
 * queue is a stream, read from its first offset (its ids and their number).
 */
export function witnessCommand(out: string, options: { peek?: boolean; stream?: boolean; queue?: string } = {}): string {
  return `node ${SCRIPT} --urls ${AMQP_URLS.join(',')} --out ${out}${options.queue ? ` --queue ${options.queue}` : ''}${options.peek ? ' --peek' : ''}${options.stream ? ' --stream' : ''}`;
}

/** The witness's lines, in the order the checkpoints ran. */
export function witnessLines(out: string): WitnessLine[] {
  if (!existsSync(out)) return [];
  return readFileSync(out, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as WitnessLine);
}

/**
 * The one line of a checkpoint of a mode's run, which counted `queue`: the queue the test expects,
 * named by the test, not read back from rmq-bench. The checkpoint must have named the same queue.
 */
export function witnessAt(lines: readonly WitnessLine[], checkpoint: string, mode: string, queue: string, run = 1): WitnessLine {
  const found = lines.filter((l) => l.checkpoint === checkpoint && l.mode === mode && l.run === run);
  expect(
    found,
    `the witness ran once at ${checkpoint} of ${mode} run ${run} (lines: ${JSON.stringify(lines.map((l) => [l.checkpoint, l.mode, l.run]))})`,
  ).toHaveLength(1);
  const line = found[0]!;
  expect(line.queue, `the queue the witness counted at ${checkpoint} of ${mode}`).toBe(queue);
  expect(line.announced, `the queue rmq-bench's checkpoint named at ${checkpoint} of ${mode}`).toBe(queue);
  return line;
}

/**
 * The sequence numbers of one run's ids, parsed here (an id is `<runId>-<seq>`), and the ids
 * that are not that run's.
 */
export function seqsOf(ids: readonly string[], runId: string): { seqs: number[]; foreign: string[] } {
  const seqs: number[] = [];
  const foreign: string[] = [];
  const prefix = `${runId}-`;
  for (const id of ids) {
    const seq = id.startsWith(prefix) ? Number(id.slice(prefix.length)) : Number.NaN;
    if (Number.isInteger(seq) && seq >= 0) seqs.push(seq);
    else foreign.push(id);
  }
  return { seqs, foreign };
}

/** How many distinct values. */
export const distinct = (xs: readonly (string | number)[]): number => new Set(xs).size;
