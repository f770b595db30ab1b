import { execa } from 'execa';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, uniqueName, withChannel } from './cli.js';

const ESC = String.fromCharCode(27);
/** Cursor up (ESC [ n A) and erase line (ESC [ 0 K): what a spinner redraws with. */
const CURSOR_CODES = new RegExp(`${ESC}\\[\\d*A|${ESC}\\[0K`);
const ERASE_LINE = `${ESC}[0K`;

/*
 * The progress on stderr in a real pseudo-terminal (util-linux `script`), with CI unset so that
 * the spinner would run. A pty that reports 0 columns (`docker run -t` from a script) once made
 * ora write cursor codes forever (4.6 MB in 4 s, 738 MB in 10 minutes, SIGTERM ignored). The
 * command below needs no broker: nothing answers on port 1, and it waits 1 s for one before it fails.
 */
/** A queue name only this file's commands carry: a runaway one (the defect back) is found by it and killed. */
const MARK = `it.pty-${process.pid}`;
const COMMAND = `node ${path.join(ROOT, 'bin', 'rmq-bench.js')} producer -n 3 --queue ${MARK} --urls amqp://u:p@127.0.0.1:1 --wait-for-broker 1s`;

async function inPty(
  cols: number,
  command = COMMAND,
  extraEnv: Record<string, string> = {},
): Promise<{ exitCode: number | undefined; timedOut: boolean; output: string }> {
  const env = { ...process.env };
  delete env.CI;
  delete env.RMQ_BENCH_QUIET;
  delete env.NO_COLOR;
  delete env.FORCE_COLOR;
  Object.assign(env, extraEnv);
  const r = await execa('script', ['-qec', `stty cols ${cols}; ${command}; echo "EXIT=$?"`, '/dev/null'], {
    env,
    extendEnv: false,
    reject: false,
    timeout: 30_000,
    stdin: 'ignore',
  });
  // script ends on the timeout, its child may not: never leave one spinning (it grew to 4 GB here).
  if (r.timedOut) await execa('pkill', ['-KILL', '-f', MARK], { reject: false });
  return { exitCode: r.exitCode, timedOut: r.timedOut, output: String(r.stdout) };
}

describe('progress in a pseudo-terminal', { timeout: 60_000 }, () => {
  it('0 columns: plain lines, no cursor codes, and the command ends with its own exit code', async () => {
    const r = await inPty(0);
    expect(r.timedOut).toBe(false);
    expect(r.output).toContain('EXIT=68');
    expect(r.output).toContain('rmq-bench: no broker at amqp://u:***@127.0.0.1:1 after waiting 1s');
    // Plain lines only: no cursor-up or erase-line codes (the loop wrote millions of them).
    expect(r.output).not.toMatch(CURSOR_CODES);
    expect(r.output.length).toBeLessThan(2_000);
  });

  it('80 columns: the spinner (cursor codes), and the same end', async () => {
    const r = await inPty(80);
    expect(r.timedOut).toBe(false);
    expect(r.output).toContain('EXIT=68');
    expect(r.output).toContain(ERASE_LINE);
  });
});

/** SGR colour codes: ESC [ 3x m (a foreground colour), which no cursor movement uses. */
const COLOUR_CODE = new RegExp(`${ESC}\\[3\\dm`);
const RED = `${ESC}[31m`;
const GREEN = `${ESC}[32m`;

describe('colour in a pseudo-terminal, and none when asked not to', { timeout: 60_000 }, () => {
  it('the error line is red; NO_COLOR=1 and --no-color leave every colour out', async () => {
    const coloured = await inPty(80);
    expect(coloured.output).toContain('EXIT=68');
    expect(coloured.output).toContain(`${RED}rmq-bench: no broker at amqp://u:***@127.0.0.1:1`);
    for (const r of [await inPty(80, COMMAND, { NO_COLOR: '1' }), await inPty(80, `${COMMAND} --no-color`)]) {
      expect(r.output).toContain('EXIT=68');
      expect(r.output).toContain('rmq-bench: no broker at amqp://u:***@127.0.0.1:1');
      expect(r.output).not.toMatch(COLOUR_CODE);
    }
  });

  const dir = mkdtemp(path.join(os.tmpdir(), 'rmq-bench-pty-'));
  const queue = uniqueName('pty-colour');
  afterAll(async () => {
    await withChannel((ch) => ch.deleteQueue(queue)).catch(() => undefined);
    await rm(await dir, { recursive: true, force: true });
  });

  it('a verdict is green on the terminal; piped (not a TTY) it is plain', async () => {
    await withChannel((ch) => ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } }));
    const ledger = path.join(await dir, 'ledger.json');
    const bin = `node ${path.join(ROOT, 'bin', 'rmq-bench.js')}`;
    const produce = `${bin} producer -n 3 --rate 0 --queue ${queue} --exchange '' --ledger ${ledger}`;
    const r = await inPty(80, `${produce} && ${bin} verify --ledger ${ledger} --idle-timeout 300ms`);
    expect(r.output).toContain('EXIT=0');
    expect(r.output).toContain(`${GREEN}verdict: OK`);
    // Piped: the same verdict line, no codes.
    const piped = await inPty(80, `${produce} && ${bin} verify --ledger ${ledger} --idle-timeout 300ms | cat`);
    expect(piped.output).toContain('EXIT=0');
    expect(piped.output).toMatch(/^verdict: OK/m);
    expect(piped.output).not.toContain(`${GREEN}verdict`);
  });
});
