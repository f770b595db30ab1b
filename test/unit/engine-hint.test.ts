import { describe, expect, it } from 'vitest';
import { engineHint, ensureEngineScript } from '../../src/cluster/docker/engine.js';

/** The hint names scripts/ensure-engine.sh where the user can run it: an installed package is not the current directory. */

describe('ensureEngineScript', () => {
  it.each([
    ['/work/rmq-bench', '/work/rmq-bench', 'scripts/ensure-engine.sh'],
    ['/work/rmq-bench/src', '/work/rmq-bench', '/work/rmq-bench/scripts/ensure-engine.sh'],
    ['/home/me', '/usr/lib/node_modules/rmq-bench', '/usr/lib/node_modules/rmq-bench/scripts/ensure-engine.sh'],
  ])('from %s, package at %s: %s', (cwd, root, expected) => {
    expect(ensureEngineScript(cwd, root)).toBe(expected);
  });
});

describe('engineHint', () => {
  const script = '/usr/lib/node_modules/rmq-bench/scripts/ensure-engine.sh';
  it.each([
    ['linux', true, `start the engine: bash ${script} (on Debian it installs docker.io and starts dockerd)`],
    ['linux', false, `start the engine (sudo systemctl start docker), or on Debian: sudo bash ${script}`],
    ['darwin', false, 'start Docker Desktop and try again'],
    ['win32', true, 'start Docker Desktop and try again'],
  ] as const)('%s, root %s', (platform, root, expected) => {
    expect(engineHint(platform, root, script)).toBe(expected);
  });
});
