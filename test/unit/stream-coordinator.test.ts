import { describe, expect, it } from 'vitest';
import { type CoordinatorView, coordinatorState, parseCoordinatorView } from '../../src/cluster/lifecycle/stream-coordinator.js';

describe('parseCoordinatorView', () => {
  it.each([
    [
      '{true,true,[rabbit@rabbit1,rabbit@rabbit2,rabbit@rabbit3]}\n',
      { running: true, registered: true, members: ['rabbit@rabbit1', 'rabbit@rabbit2', 'rabbit@rabbit3'] },
    ],
    ["{true,true,['rabbit@my-host',rabbit@b]}", { running: true, registered: true, members: ['rabbit@my-host', 'rabbit@b'] }],
    ['{false,false,none}', { running: false, registered: false, members: undefined }],
    ['{false,unknown,none}', { running: false, registered: undefined, members: undefined }],
    ['{true,true,[]}', { running: true, registered: true, members: [] }],
    ['Error: noproc', undefined],
    ['', undefined],
  ])('%j', (printed, view) => {
    expect(parseCoordinatorView(printed)).toEqual(view);
  });
});

const all = ['rabbit@rabbit1', 'rabbit@rabbit2', 'rabbit@rabbit3'];
const runs: CoordinatorView = { running: true, registered: true, members: all };
const lost: CoordinatorView = { running: false, registered: false, members: undefined };
const booting: CoordinatorView = { running: false, registered: true, members: undefined };
const never: CoordinatorView = { running: false, registered: false, members: undefined };
const views = (...v: (CoordinatorView | undefined)[]): Map<string, CoordinatorView | undefined> => new Map(all.map((n, i) => [n, v[i]]));

describe('coordinatorState', () => {
  it.each([
    ['every member runs', views(runs, runs, runs), { members: all, stranded: [], majority: true }],
    [
      'one lost its name (the case seen after a kill): stranded, the others a majority',
      views(lost, runs, runs),
      { members: all, stranded: ['rabbit@rabbit1'], majority: true },
    ],
    ['two lost theirs: no majority', views(lost, lost, runs), { members: all, stranded: ['rabbit@rabbit1', 'rabbit@rabbit2'], majority: false }],
    ['a member still registered (booting, or stopped) is not stranded', views(booting, runs, runs), { members: all, stranded: [], majority: true }],
    ['a node that did not answer is not stranded', views(undefined, runs, runs), { members: all, stranded: [], majority: true }],
    ['no coordinator yet (no stream ever declared): nothing', views(never, never, never), { members: [], stranded: [], majority: false }],
    [
      'a node the coordinator does not list is not stranded (the leader adds it)',
      views({ running: false, registered: false, members: undefined }, { ...runs, members: all.slice(1) }, { ...runs, members: all.slice(1) }),
      { members: all.slice(1), stranded: [], majority: true },
    ],
  ])('%s', (_, v, state) => {
    expect(coordinatorState(v)).toEqual(state);
  });
});
