import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseWorkshop } from '../../scripts/workshop.mjs';
import { ROOT, runCli } from './cli.js';

// Every command of docs/WORKSHOP.md, in the document's order (later steps build on earlier ones:
// the audit of step 9 passes only because dlq-demo bound demo.dlq to demo.dlx).
const commands = parseWorkshop(readFileSync(path.join(ROOT, 'docs', 'WORKSHOP.md'), 'utf8')).flatMap((b) => b.commands);

describe('docs/WORKSHOP.md: every command, in order, passes its verdict', { timeout: 300_000 }, () => {
  it('has the nine steps of the article, each with a command', () => {
    const sections = [...new Set(commands.map((c) => c.section))];
    expect(sections.map((s) => s.split('.')[0])).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9']);
  });

  it.each(commands.map((c) => [`${c.section}: rmq-bench ${c.args.join(' ')}`, c] as const))('%s', async (_name, c) => {
    const r = await runCli([...c.args, '--json']);
    expect(r.exitCode, `${c.args.join(' ')} (docs/WORKSHOP.md line ${c.line}):\n${r.stderr}`).toBe(0);
    const doc = JSON.parse(r.stdout) as { ok?: boolean; verdict?: string };
    expect(doc.ok ?? true).toBe(true);
  });
});
