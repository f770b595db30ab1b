import { describe, expect, it } from 'vitest';
import { closedPort, parseJson, runCli } from './cli.js';

/*
 * Under --json an error is a document too: the real binary, with no broker behind the address it
 * is given (a port nothing listens on) and with a bad option. stdout parses as one JSON document
 * of kind error; stderr keeps its one line.
 */

interface ErrorDoc {
  kind: string;
  schemaVersion: number;
  exitCode: number;
  message: string;
  hint: string | null;
}

describe('--json: a failure is an error document on stdout, the line on stderr', { timeout: 60_000 }, () => {
  it('compare against a management API that does not answer: exit 68, its document', async () => {
    const port = await closedPort();
    const r = await runCli(['compare', '--json', '--management-urls', `http://127.0.0.1:${port}`]);
    expect(r.exitCode, r.stderr).toBe(68);
    const doc = parseJson<ErrorDoc>(r);
    expect(doc).toMatchObject({ kind: 'error', schemaVersion: 1, exitCode: 68 });
    expect(doc.message).toContain(`127.0.0.1:${port}`);
    expect(r.stderr.trim().split('\n')).toEqual([`rmq-bench: ${doc.message}${doc.hint ? ` (${doc.hint})` : ''}`]);
  });

  it('a bad option: exit 2, its document; without --json, stdout stays empty', async () => {
    const json = await runCli(['compare', '--json', '--no-such-flag']);
    expect(json.exitCode).toBe(2);
    expect(parseJson<ErrorDoc>(json)).toMatchObject({
      kind: 'error',
      exitCode: 2,
      message: "unknown option '--no-such-flag'",
      hint: 'run rmq-bench compare --help',
    });
    expect(json.stderr.trim().split('\n')).toEqual(["rmq-bench: unknown option '--no-such-flag' (run rmq-bench compare --help)"]);
    const plain = await runCli(['compare', '--no-such-flag']);
    expect(plain.exitCode).toBe(2);
    expect(plain.stdout).toBe('');
    expect(plain.stderr).toBe(json.stderr);
  });
});
