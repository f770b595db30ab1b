import { describe, expect, it } from 'vitest';
import { LEFTOVERS } from '../../src/cluster/lifecycle/heal.js';
import { FAULT_KINDS } from '../../src/faults/kinds.js';
import { awaitsElection, FAULTS } from '../../src/faults/registry.js';

describe('the fault registry: one spec per kind', () => {
  it('lists the kinds of kinds.ts, in their order, each spec under its own name', () => {
    expect(Object.keys(FAULTS)).toEqual([...FAULT_KINDS]);
    for (const [kind, spec] of Object.entries(FAULTS)) expect(spec.kind).toBe(kind);
  });
  it('every kind has a colour of its own in the charts', () => {
    const colours = Object.values(FAULTS).map((s) => s.color);
    expect(new Set(colours).size).toBe(colours.length);
    for (const c of colours) expect(c).toMatch(/^#[0-9a-f]{6}$/);
  });
  it('every leftover cluster up heals is one some fault can leave, and none is left unhealed', () => {
    const named = new Set(Object.values(FAULTS).flatMap((s) => s.leftovers));
    expect([...named].sort()).toEqual(Object.keys(LEFTOVERS).sort());
  });
  it.each([
    ['kill', true],
    ['partition-halves', true],
    ['membership', true],
    ['partition-ring', false],
    ['quorum-loss', false],
    ['rolling-restart', false],
  ] as const)('%s: a new leader awaited while it is on: %s', (kind, awaited) => {
    expect(awaitsElection(kind)).toBe(awaited);
  });
  it('a fault that needs more than one node, or our own containers, says so', () => {
    expect(FAULTS['partition-ring'].needs).toMatchObject({ nodes: 5, ownContainers: true });
    expect(FAULTS['quorum-loss'].needs.ownContainers).toBe(true);
    expect(FAULTS.kill.needs).toEqual({});
  });
});
