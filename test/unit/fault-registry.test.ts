import { describe, expect, it } from 'vitest';
import { LEFTOVERS } from '../../src/cluster/heal.js';
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
  it('a new leader is awaited exactly for the faults that take the leader away and leave a majority', () => {
    expect(FAULT_KINDS.filter(awaitsElection)).toEqual(['kill', 'stop', 'pause', 'disconnect', 'partition', 'partition-halves', 'membership']);
  });
  it('a fault of one container has onContainer; one made of others (quorum-loss, rolling-restart, membership) has none', () => {
    expect(FAULT_KINDS.filter((k) => FAULTS[k].onContainer === undefined)).toEqual(['quorum-loss', 'rolling-restart', 'membership']);
  });
});
