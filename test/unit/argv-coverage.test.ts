import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createProgram } from '../../src/cli/program.js';
import { parseWorkshop, splitArgs } from '../../scripts/workshop.mjs';
import { captureOutput, invocationOf } from './program-harness.js';

/**
 * Every command line the scripts, the workshop and the help examples run, read from those files
 * and parsed by createProgram with a dispatch that only records: when a flag's syntax changes, a
 * document that was not updated fails here, without a cluster. The integration tests' and the
 * scenarios' own command lines are not copied here: they run for real against the cluster, where
 * a line that no longer parses fails its test.
 */

const ROOT = path.resolve(import.meta.dirname, '..', '..');

/** scripts/smoke.sh: `step <name> <args...>` (each run with --json). */
function smokeSteps(): string[][] {
  return readFileSync(path.join(ROOT, 'scripts', 'smoke.sh'), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('step ') && !l.startsWith('step()'))
    .map((l) => [...splitArgs(l).slice(2), '--json']);
}

/** docs/WORKSHOP.md's runnable commands. */
function workshopCommands(): string[][] {
  return parseWorkshop(readFileSync(path.join(ROOT, 'docs', 'WORKSHOP.md'), 'utf8')).flatMap((b) => b.commands.map((c) => c.args));
}

/** Every command's --help examples. */
function helpExamples(): string[][] {
  const all: string[] = [];
  const walk = (c: Command): void => {
    const out: string[] = [];
    c.configureOutput({ writeOut: (s) => out.push(s), writeErr: (s) => out.push(s) });
    c.outputHelp();
    for (const line of out.join('').split('\n')) {
      const m = /^\s+\$ rmq-bench (.*)$/.exec(line);
      if (m) all.push(m[1]!);
    }
    c.commands.forEach(walk);
  };
  walk(createProgram(async () => undefined));
  return [...new Set(all)].map(splitArgs);
}

// commander's messages for the refused lines, kept out of the test log.
captureOutput();

describe('every command line the documents run still parses', () => {
  it.each([
    ...smokeSteps().map((args) => ({ from: 'smoke.sh', args })),
    ...workshopCommands().map((args) => ({ from: 'WORKSHOP.md', args })),
    ...helpExamples().map((args) => ({ from: '--help', args })),
  ])('$from: $args', async ({ args }) => {
    await invocationOf(args); // parses, and dispatches exactly one command
  });

  it('finds the scripts, the workshop and the examples (not an empty table)', () => {
    expect(smokeSteps().length).toBeGreaterThan(8);
    expect(workshopCommands().length).toBeGreaterThan(10);
    expect(helpExamples().length).toBeGreaterThan(40);
  });
});
