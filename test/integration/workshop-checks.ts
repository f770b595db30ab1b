import { describe, expect, it } from 'vitest';
import {
  WORKSHOP_COMMANDS,
  WORKSHOP_HTML,
  WORKSHOP_PARTS,
  WORKSHOP_WITNESS,
  WORKSHOP_TIMEOUT_MS,
  partCommands,
  sectionNumber,
  workshopOutcome,
} from './workshop-run.js';

// Every command of docs/WORKSHOP.md, run once per part in the document's order (workshop-run.ts),
// each checked by workshop-N.test.ts for its part: its exit code, and either its verdict (`ok`)
// or, for the commands that report without a verdict, what the step is there to show. The demos'
// own test files check more of the same documents. Not a test file itself: the parts' files call
// describeWorkshopPart, so each part can run in its own shard.

type Doc = Record<string, unknown> & { ok?: unknown; kind?: unknown };

/** Commands whose document has no `ok`: what makes each of them right. */
const WITHOUT_VERDICT: Record<string, (doc: Doc) => void> = {
  'cluster status': (doc) => {
    const nodes = doc.nodes as { running: boolean }[];
    expect(nodes).toHaveLength(3);
    expect(nodes.every((n) => n.running)).toBe(true);
  },
  'bench -n 3000': (doc) => {
    const runs = doc.runs as { mode: string; published: number; confirmed: number; consumed: number }[];
    expect(runs.map((r) => r.mode)).toEqual(['none', 'tx', 'sync', 'batch', 'async']);
    for (const r of runs) {
      expect(r.published, r.mode).toBe(3000);
      expect(r.consumed, r.mode).toBe(3000);
      expect(r.confirmed, r.mode).toBe(r.mode === 'none' ? 0 : 3000);
    }
  },
  'prefetch-demo': (doc) => {
    const rows = doc.rows as { prefetch: number; fastProcessed: number; slowProcessed: number }[];
    const count = (doc.options as { count: number }).count;
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect(r.fastProcessed + r.slowProcessed, `prefetch ${r.prefetch}`).toBe(count);
  },
  'dlq inspect': (doc) => {
    // Right after dlq-demo --reason delivery_limit,rejected,maxlen, which empties demo.dlq before
    // each reason: the last reason's one dead letter (max-length 2 of 3, the oldest dropped).
    const rows = doc.rows as { messageId: string; reason: string; sourceQueue: string; count: number }[];
    expect(rows.map((r) => [r.messageId, r.reason, r.sourceQueue, r.count])).toEqual([['dlq-maxlen-1', 'maxlen', 'demo.orders', 1]]);
    expect(doc.total).toBe(1);
  },
};

/** The document's shape: every section has a command, is in exactly one part, and every check names a real command. */
export function describeWorkshopShape(): void {
  describe('docs/WORKSHOP.md: its steps and their parts', () => {
    it("has the article's steps, the consumer timeout and the resource alarm, each with a command", () => {
      const sections = [...new Set(WORKSHOP_COMMANDS.map((c) => c.section))];
      expect(sections.map((s) => s.split('.')[0])).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11']);
    });

    it("puts every section in exactly one part, each part in the document's order", () => {
      const numbers = [...new Set(WORKSHOP_COMMANDS.map(sectionNumber))];
      expect([...WORKSHOP_PARTS.flat()].sort((a, b) => a - b)).toEqual(numbers);
      for (const part of WORKSHOP_PARTS) expect([...part].sort((a, b) => a - b)).toEqual(part);
      const lines = (cs: { line: number }[]) => cs.map((c) => c.line).sort((a, b) => a - b);
      expect(lines(WORKSHOP_PARTS.flatMap((_, i) => partCommands(i + 1)))).toEqual(lines(WORKSHOP_COMMANDS));
    });

    it('names a check for every command that reports without a verdict, and only for workshop commands', () => {
      const lines = WORKSHOP_COMMANDS.map((c) => c.args.join(' '));
      for (const k of Object.keys(WITHOUT_VERDICT)) expect(lines).toContain(k);
    });

    it('asks --html only of workshop commands (their pages are checked on the same run)', () => {
      const lines = WORKSHOP_COMMANDS.map((c) => c.args.join(' '));
      for (const k of WORKSHOP_HTML) expect(lines).toContain(k);
    });

    it('runs the witness only with workshop commands (their counts are checked on the same run)', () => {
      const lines = WORKSHOP_COMMANDS.map((c) => c.args.join(' '));
      for (const k of Object.keys(WORKSHOP_WITNESS)) expect(lines).toContain(k);
    });
  });
}

/** Part n's commands, each run once (workshop-run.ts) and checked. */
export function describeWorkshopPart(n: number): void {
  const commands = partCommands(n);
  describe(`docs/WORKSHOP.md part ${n} (sections ${WORKSHOP_PARTS[n - 1]!.join(', ')}): every command, in order, passes its verdict`, {
    timeout: WORKSHOP_TIMEOUT_MS,
  }, () => {
    it.each(commands.map((c) => [`${c.section}: rmq-bench ${c.args.join(' ')}`, c] as const))('%s', async (_name, c) => {
      const line = c.args.join(' ');
      const o = await workshopOutcome(line);
      expect(o.exitCode, `${line} (docs/WORKSHOP.md line ${c.line}):\n${o.stderr}`).toBe(0);
      expect(o.doc, `${line}: stdout is not one JSON document`).not.toBeNull();
      const doc = o.doc as Doc;
      const check = WITHOUT_VERDICT[line];
      if (check) {
        expect(doc.ok, `${line} has a verdict now: drop it from WITHOUT_VERDICT`).toBeUndefined();
        check(doc);
      } else {
        expect(typeof doc.ok, `${line}: the document has no verdict (ok)`).toBe('boolean');
        expect(doc.ok, `${line}: verdict failed`).toBe(true);
      }
    });
  });
}
