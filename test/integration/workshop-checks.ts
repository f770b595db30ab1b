import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { schemaChecked } from './schema.js';
import { ROOT } from './cli.js';
import type { ConsumerTimeoutDemoResult } from '../../src/scenarios/demos/consumer-timeout-plan.js';
import { brokerMissesOnly } from './consumer-timeout-checks.js';
import {
  WORKSHOP_COMMANDS,
  WORKSHOP_HTML,
  WORKSHOP_PARTS,
  WORKSHOP_WITNESS,
  WORKSHOP_TIMEOUT_MS,
  partCommands,
  sectionNumber,
  workshopDoc,
  workshopOutcome,
} from './workshop-run.js';

// Every command of docs/WORKSHOP.md, run once per part in the document's order (workshop-run.ts),
// each checked by workshop-N.test.ts for its part: its exit code, and either its verdict (`ok`)
// together with counts the tests read themselves (VERDICT_CHECKED), or, for the commands that
// report without a verdict, what the step is there to show. Not a test file itself: the parts'
// files call describeWorkshopPart, so each part can run in its own shard.

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

/** An audit item, as the audit's document lists it. */
interface AuditItem {
  id: string;
  status: 'pass' | 'warn' | 'fail';
  object: string;
  message: string;
}

/**
 * Commands with a verdict. Their `ok` is rmq-bench's own word, so each is held to what the step
 * claims by the tests' own reading as well: a test file that reads the same run's document
 * (workshopDoc or workshopOutcome) and checks its counts, often against the tests' witness; or,
 * where no file does, a check here.
 */
const VERDICT_CHECKED: Record<string, string | ((doc: Doc) => Promise<void>)> = {
  'durability-demo -n 1000': 'durability-demo.test.ts',
  'compare -n 50000': 'producer.test.ts',
  'consumer-crash': 'consumer.test.ts',
  'dlq-demo --reason expired': 'dlq-demo.test.ts',
  'dlq-demo --reason delivery_limit,rejected,maxlen': 'dlq-demo.test.ts',
  'retry-demo': 'retry-demo.test.ts',
  'retry-demo --backoff 5s,30s,5m --time-scale 0.05': 'retry-demo.test.ts',
  'delayed-retry-demo': 'delayed-retry-demo.test.ts',
  'consumer-timeout-demo': 'consumer-timeout-demo.test.ts',
  'alarm-demo': 'alarm-demo.test.ts',
  // The checklist after the part's earlier steps: of the stock topology, exactly the three
  // warnings the workshop explains, and demo.dlq holding what those steps left there, counted
  // from their own documents: the dead letter dlq inspect listed, and the ladder's poison message.
  // The audit reads the management API's queue figures, which a node refreshes every 5 s: the
  // poison message, dead-lettered just before the audit, may not be in them yet.
  audit: async (doc) => {
    const items = doc.items as AuditItem[];
    expect(items.filter((i) => i.status === 'fail')).toEqual([]);
    const stock = items.filter((i) => /^(queues? demo\.|exchange demo\.|node |cluster |policies|dead-letter graph)/.test(i.object));
    expect(
      stock
        .filter((i) => i.status !== 'pass')
        .map((i) => `${i.status} ${i.id} ${i.object}`)
        .sort(),
    ).toEqual(
      [
        'warn dead-letter-strategy queue demo.orders',
        'warn dead-letter-strategy queue demo.retry',
        'warn dlq-messages queue demo.dlq',
        'warn retry-loop queues demo.orders → demo.retry → demo.orders',
      ].sort(),
    );
    const inspected = await workshopDoc<{ total: number }>('dlq inspect');
    const ladder = await workshopDoc<{ poison: { inDlq: boolean } }>('retry-demo --backoff 5s,30s,5m --time-scale 0.05');
    const dlq = items.find((i) => i.id === 'dlq-messages' && i.object === 'queue demo.dlq')!;
    const m = /^dead-letter queue holds (\d+) messages?: /.exec(dlq.message);
    expect(m, dlq.message).not.toBeNull();
    expect(Number(m![1])).toBeGreaterThanOrEqual(inspected.total);
    expect(Number(m![1])).toBeLessThanOrEqual(inspected.total + (ladder.poison.inDlq ? 1 : 0));
  },
};

/** A test file's source, to see that it reads a workshop command's document. */
const testSource = (file: string): string => readFileSync(path.join(ROOT, 'test', 'integration', file), 'utf8');

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

    it("checks every command's verdict by the tests' own reading: here, or in a test file that reads that command's document", () => {
      const lines = WORKSHOP_COMMANDS.map((c) => c.args.join(' '));
      expect(lines.filter((l) => l in WITHOUT_VERDICT === l in VERDICT_CHECKED)).toEqual([]);
      for (const k of Object.keys(VERDICT_CHECKED)) expect(lines).toContain(k);
      for (const [line, check] of Object.entries(VERDICT_CHECKED)) {
        if (typeof check !== 'string') continue;
        const source = testSource(check);
        expect(source, `${check} names '${line}'`).toContain(`'${line}'`);
        expect(source, `${check} reads a workshop document`).toMatch(/workshop(Doc|Outcome)\b/);
      }
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
      expect(o.doc, `${line}: stdout is not one JSON document`).not.toBeNull();
      const doc = schemaChecked(o.doc as Doc);
      // RabbitMQ's consumer timeout that did not fire fails the demo's verdict, rightly; that and
      // nothing else (consumer-timeout-checks.ts).
      const brokerMissed = line === 'consumer-timeout-demo' && brokerMissesOnly(doc as unknown as ConsumerTimeoutDemoResult).length > 0;
      expect(o.exitCode, `${line} (docs/WORKSHOP.md line ${c.line}):\n${o.stderr}`).toBe(brokerMissed ? 1 : 0);
      const check = WITHOUT_VERDICT[line];
      if (check) {
        expect(doc.ok, `${line} has a verdict now: drop it from WITHOUT_VERDICT`).toBeUndefined();
        check(doc);
      } else {
        expect(typeof doc.ok, `${line}: the document has no verdict (ok)`).toBe('boolean');
        expect(doc.ok, `${line}: verdict failed`).toBe(!brokerMissed);
        const own = VERDICT_CHECKED[line];
        expect(own, `${line}: no check of the tests' own in VERDICT_CHECKED`).toBeDefined();
        if (typeof own === 'function') await own(doc);
      }
    });
  });
}
