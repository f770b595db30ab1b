import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { inject } from 'vitest';
import { parseWorkshop, type WorkshopCommand } from '../../scripts/workshop.mjs';
import { ROOT, runCli } from './cli.js';
import { type WitnessLine, witnessCommand, witnessLines } from './witness.js';

/**
 * docs/WORKSHOP.md's commands, run once per test session, each with --json. The walkthrough is
 * cut into parts (WORKSHOP_PARTS), each run in the document's order: later steps of a part build
 * on earlier ones (dlq inspect reads what dlq-demo left), and no step needs another part's. A
 * part runs when the first file of the session asks for one of its commands; workshop-N.test.ts
 * checks every verdict of part N, and the demos' own test files check the details of the same
 * documents instead of running the same demo again. scripts/test-integration.sh puts each part
 * and the files that read it in one shard, so the three parts run at the same time, each on its
 * own cluster. The outcomes are kept in the session's folder (from the global setup).
 */

declare module 'vitest' {
  export interface ProvidedContext {
    sessionDir: string;
  }
}

export interface WorkshopOutcome extends WorkshopCommand {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** stdout as JSON, or null when it is not one JSON document. */
  doc: unknown;
  durationMs: number;
  /** The --html page the run also wrote (WORKSHOP_HTML), or null. */
  htmlFile: string | null;
  /** What the tests' witness counted at the run's checkpoints (WORKSHOP_WITNESS), or null. */
  witness: WitnessLine[] | null;
}

/**
 * Commands also run with --html <file>: their page is checked on the same run (producer.test.ts
 * opens compare's), so no test runs the same fault sequence again just for its page.
 */
export const WORKSHOP_HTML: readonly string[] = ['compare -n 50000'];

/**
 * Commands also run with --checkpoint-cmd: the tests' witness (queue-witness.mjs, no code shared
 * with src/) counts the queue, and peeks every message id in it, before rmq-bench drains it. The
 * tests compare the documents with those counts (producer.test.ts, consumer.test.ts, dlq-demo.test.ts).
 */
export const WORKSHOP_WITNESS: Readonly<Record<string, { peek: boolean }>> = {
  'compare -n 50000': { peek: true },
  // Its runs purge and refill the queue: the counts before the first consumer and after the last one.
  'consumer-crash': { peek: false },
  // Each reason's dead letters, as demo.dlq holds them (with their x-first-death-reason).
  'dlq-demo --reason expired': { peek: true },
  'dlq-demo --reason delivery_limit,rejected,maxlen': { peek: true },
};

export const WORKSHOP_COMMANDS: WorkshopCommand[] = parseWorkshop(readFileSync(path.join(ROOT, 'docs', 'WORKSHOP.md'), 'utf8')).flatMap((b) => b.commands);

/**
 * The parts, by section number, each in the document's order. Part 1 restarts the cluster and
 * kills a leader (durability, confirms, transactions); part 2 is the consumer's side, the dead
 * letters and the checklist; part 3 the 4.3 features and the alarm. workshop-1.test.ts checks
 * that every section is in exactly one part.
 */
export const WORKSHOP_PARTS: readonly (readonly number[])[] = [
  [1, 2, 3],
  // The checklist (11) reads the topology as the earlier steps left it: dlq-demo's DLQ, bound to
  // demo.dlx, is what gives the retry loop its exit (without it, retry-loop fails).
  [4, 5, 6, 7, 11],
  [8, 9, 10],
];

/** A command's section number: "6. Dead-letter queue" → 6. */
export function sectionNumber(c: WorkshopCommand): number {
  return Number.parseInt(c.section, 10);
}

/** The commands of part n (1-based), in the document's order. */
export function partCommands(n: number): WorkshopCommand[] {
  const sections = WORKSHOP_PARTS[n - 1];
  if (!sections) throw new Error(`the workshop has parts 1 to ${WORKSHOP_PARTS.length}, not ${n}`);
  return WORKSHOP_COMMANDS.filter((c) => sections.includes(sectionNumber(c)));
}

/** Long enough for the longest part on a slow machine (about 1.5 minutes each here). */
export const WORKSHOP_TIMEOUT_MS = 900_000;

const memo = new Map<number, Promise<WorkshopOutcome[]>>();

/** Part n's outcomes: run once per session, by whichever file asks first. */
export function workshopPart(n: number): Promise<WorkshopOutcome[]> {
  let run = memo.get(n);
  if (!run) {
    run = runPart(n);
    memo.set(n, run);
  }
  return run;
}

function runPart(n: number): Promise<WorkshopOutcome[]> {
  return runWorkshopPart(n, inject('sessionDir'));
}

/**
 * Run part n and keep its outcomes in the session's folder, or read them when it ran already
 * (from the global setup: scripts/test-integration.sh has each shard's part run there, first).
 */
export async function runWorkshopPart(n: number, sessionDir: string): Promise<WorkshopOutcome[]> {
  const commands = partCommands(n);
  const dir = path.join(sessionDir, 'workshop');
  const file = path.join(dir, `part-${n}.json`);
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as WorkshopOutcome[];
  mkdirSync(dir, { recursive: true });
  const outcomes: WorkshopOutcome[] = [];
  for (const c of commands) {
    const line = c.args.join(' ');
    const base = path.join(dir, line.replace(/[^a-z0-9]+/gi, '-'));
    const htmlFile = WORKSHOP_HTML.includes(line) ? `${base}.html` : null;
    const witness = WORKSHOP_WITNESS[line];
    const witnessFile = witness ? `${base}.witness.jsonl` : null;
    const extra = [...(htmlFile ? ['--html', htmlFile] : []), ...(witness && witnessFile ? ['--checkpoint-cmd', witnessCommand(witnessFile, witness)] : [])];
    const started = performance.now();
    const r = await runCli([...c.args, '--json', ...extra], { timeoutMs: 600_000 });
    const durationMs = Math.round(performance.now() - started);
    process.stderr.write(
      `workshop part ${n}: rmq-bench ${line} --json${htmlFile ? ' --html' : ''}${witnessFile ? ' --checkpoint-cmd <witness>' : ''}: exit ${r.exitCode} in ${(durationMs / 1000).toFixed(1)} s\n`,
    );
    let doc: unknown = null;
    try {
      doc = JSON.parse(r.stdout);
    } catch {
      doc = null;
    }
    outcomes.push({ ...c, ...r, doc, durationMs, htmlFile, witness: witnessFile ? witnessLines(witnessFile) : null });
  }
  writeFileSync(file, JSON.stringify(outcomes));
  return outcomes;
}

/** The outcome of the workshop's command `rmq-bench <line>` (exactly as written in the document). */
export async function workshopOutcome(line: string): Promise<WorkshopOutcome> {
  const c = WORKSHOP_COMMANDS.find((x) => x.args.join(' ') === line);
  if (!c) throw new Error(`docs/WORKSHOP.md has no command 'rmq-bench ${line}' (it has: ${WORKSHOP_COMMANDS.map((o) => o.args.join(' ')).join('; ')})`);
  const part = WORKSHOP_PARTS.findIndex((sections) => sections.includes(sectionNumber(c))) + 1;
  if (part === 0) throw new Error(`rmq-bench ${line} (section '${c.section}') is in no part of WORKSHOP_PARTS`);
  const found = (await workshopPart(part)).find((o) => o.args.join(' ') === line);
  if (!found) throw new Error(`part ${part} of the workshop did not run 'rmq-bench ${line}'`);
  return found;
}

/** The --json document of a workshop command that must have succeeded (exit 0). */
export async function workshopDoc<T>(line: string): Promise<T> {
  const o = await workshopOutcome(line);
  if (o.exitCode !== 0 || o.doc === null) throw new Error(`rmq-bench ${line} --json (docs/WORKSHOP.md line ${o.line}) exited ${o.exitCode}:\n${o.stderr}`);
  return o.doc as T;
}
