import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { inject } from 'vitest';
import { parseWorkshop, type WorkshopCommand } from '../../scripts/workshop.mjs';
import { ROOT, runCli } from './cli.js';

/**
 * docs/WORKSHOP.md's commands, run once per test session, in the document's order (later steps
 * build on earlier ones), each with --json. workshop.test.ts checks every verdict; the demo's own
 * test files check the details of the same documents instead of running the same demo again.
 * The outcomes are kept in the session's folder (from the global setup), so whichever file asks
 * first runs them, and every later file reads them.
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
}

export const WORKSHOP_COMMANDS: WorkshopCommand[] = parseWorkshop(readFileSync(path.join(ROOT, 'docs', 'WORKSHOP.md'), 'utf8')).flatMap((b) => b.commands);

/** Long enough for the whole walkthrough on a slow machine (about 3.5 minutes here). */
export const WORKSHOP_TIMEOUT_MS = 900_000;

let memo: Promise<WorkshopOutcome[]> | undefined;

export function workshopRun(): Promise<WorkshopOutcome[]> {
  memo ??= (async () => {
    const dir = path.join(inject('sessionDir'), 'workshop');
    const file = path.join(dir, 'outcomes.json');
    if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as WorkshopOutcome[];
    mkdirSync(dir, { recursive: true });
    const outcomes: WorkshopOutcome[] = [];
    for (const c of WORKSHOP_COMMANDS) {
      const r = await runCli([...c.args, '--json'], { timeoutMs: 600_000 });
      let doc: unknown = null;
      try {
        doc = JSON.parse(r.stdout);
      } catch {
        doc = null;
      }
      outcomes.push({ ...c, ...r, doc });
    }
    writeFileSync(file, JSON.stringify(outcomes));
    return outcomes;
  })();
  return memo;
}

/** The outcome of the workshop's command `rmq-bench <line>` (exactly as written in the document). */
export async function workshopOutcome(line: string): Promise<WorkshopOutcome> {
  const all = await workshopRun();
  const found = all.find((o) => o.args.join(' ') === line);
  if (!found) throw new Error(`docs/WORKSHOP.md has no command 'rmq-bench ${line}' (it has: ${all.map((o) => o.args.join(' ')).join('; ')})`);
  return found;
}

/** The --json document of a workshop command that must have succeeded (exit 0). */
export async function workshopDoc<T>(line: string): Promise<T> {
  const o = await workshopOutcome(line);
  if (o.exitCode !== 0 || o.doc === null) throw new Error(`rmq-bench ${line} --json (docs/WORKSHOP.md line ${o.line}) exited ${o.exitCode}:\n${o.stderr}`);
  return o.doc as T;
}
