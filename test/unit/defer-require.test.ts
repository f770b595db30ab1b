import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { deferFunctionModule, dockerodeExtras } from '../../src/cluster/docker/defer-require.js';

const require = createRequire(import.meta.url);

/** A CommonJS module that counts its loads (a global) and exports a function. */
function fakeModule(name: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rmq-bench-defer-'));
  const file = path.join(dir, `${name}.js`);
  writeFileSync(file, `globalThis.${name} = (globalThis.${name} ?? 0) + 1;\nmodule.exports = function (x) { return [this?.tag, x * 2]; };\n`);
  return file;
}
const loads = (name: string): number => ((globalThis as Record<string, unknown>)[name] as number | undefined) ?? 0;

describe('deferFunctionModule', () => {
  it('a require gets a stand-in; the module loads on the first call, once, and every call reaches it', () => {
    const file = fakeModule('deferA');
    deferFunctionModule(file, require);
    const fn = require(file) as (this: unknown, x: number) => unknown;
    expect(loads('deferA')).toBe(0);
    expect(fn.call({ tag: 't' }, 21)).toEqual(['t', 42]);
    expect(loads('deferA')).toBe(1);
    expect(fn(1)).toEqual([undefined, 2]);
    expect(loads('deferA')).toBe(1);
    // A later require gets the real module, not another load.
    expect((require(file) as (x: number) => unknown)(2)).toEqual([undefined, 4]);
    expect(loads('deferA')).toBe(1);
  });
  it('a module already loaded is left as it is', () => {
    const file = fakeModule('deferB');
    const real = require(file);
    deferFunctionModule(file, require);
    expect(require(file)).toBe(real);
    expect(loads('deferB')).toBe(1);
  });
});

describe('dockerodeExtras: what the installed dockerode and docker-modem load and defer', () => {
  it.each([
    ['session.js', /require\("@grpc\/grpc-js"\)/],
    ['ssh.js', /require\('ssh2'\)/],
  ])('%s exists, loads what it is deferred for, and exports one function', (base, loadsWhat) => {
    const file = dockerodeExtras(require).find((f) => path.basename(f) === base);
    expect(file).toBeDefined();
    expect(readFileSync(file!, 'utf8')).toMatch(loadsWhat);
    expect(readFileSync(file!, 'utf8')).toMatch(/module\.exports = (function|withSession)/);
  });
  it('dockerode requires both where they are deferred', () => {
    const [session, ssh] = dockerodeExtras(require);
    expect(readFileSync(path.join(path.dirname(session!), 'docker.js'), 'utf8')).toContain("require('./session')");
    expect(readFileSync(path.join(path.dirname(ssh!), 'modem.js'), 'utf8')).toContain("require('./ssh')");
  });
});
