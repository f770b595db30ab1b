import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { joinContinuations, parseWorkshop, splitArgs } from '../../scripts/workshop.mjs';
import { captureOutput, invocationOf } from './program-harness.js';

/**
 * docs/WORKSHOP.md's leader-only commands: the ```console blocks (before, after, when a live run
 * differs), which no test runs. Each rmq-bench line there must still parse, and the cluster's
 * own lifecycle (up, reset, down) must stay out of the ```sh blocks the integration tests run.
 */

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const markdown = readFileSync(path.join(ROOT, 'docs', 'WORKSHOP.md'), 'utf8');

/** The `$ npx rmq-bench ...` lines of the ```console blocks (a backslash going on with the next line), as argv words. */
function consoleCommands(): string[][] {
  const out: string[][] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== '```console') continue;
    let j = i + 1;
    while (j < lines.length && lines[j]!.trim() !== '```') j++;
    for (const l of joinContinuations(lines.slice(i + 1, j), i + 2)) {
      const m = /^\$\s+(?:npx\s+)?rmq-bench\s+(.*?)\s*$/.exec(l.text);
      if (m) out.push(splitArgs(m[1]!));
    }
    i = j;
  }
  return out;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

// commander's messages for a refused line, kept out of the test log.
captureOutput();

describe("docs/WORKSHOP.md: the leader's commands", () => {
  it('finds them (not an empty table)', () => {
    expect(consoleCommands().length).toBeGreaterThan(5);
  });

  it.each(consoleCommands().map((args) => ({ line: args.join(' '), args })))('rmq-bench $line parses', async ({ args }) => {
    await invocationOf(args); // parses, and dispatches exactly one command
  });

  it('leaves cluster up, reset and down out of the walkthrough the tests run', () => {
    const run = parseWorkshop(markdown).flatMap((b) => b.commands.map((c) => c.args));
    for (const args of run) expect(args[0] === 'cluster' && ['up', 'reset', 'down'].includes(args[1] ?? ''), args.join(' ')).toBe(false);
  });

  it('links only to headings it has', () => {
    const anchors = new Set(
      markdown
        .split('\n')
        .map((l) => /^#{1,6}\s+(.*)$/.exec(l)?.[1])
        .filter((h): h is string => h !== undefined)
        .map(anchorOf),
    );
    const links = [...markdown.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]!);
    expect(links.length).toBeGreaterThan(0);
    for (const l of links) expect(anchors, `#${l}`).toContain(l);
  });
});
