import { describe, expect, it } from 'vitest';
import {
  type CoordinatorView,
  coordinatorNudge,
  coordinatorState,
  coordinatorWhole,
  needsRepair,
  parseCoordinatorView,
} from '../../src/cluster/lifecycle/stream-coordinator.js';

const all = ['rabbit@rabbit1', 'rabbit@rabbit2', 'rabbit@rabbit3'];

describe('parseCoordinatorView', () => {
  it.each([
    [
      '{true,true,leader,11,42,[rabbit@rabbit1,rabbit@rabbit2,rabbit@rabbit3]}\n',
      { running: true, registered: true, raftState: 'leader', term: 11, lastIndex: 42, members: all },
    ],
    [
      "{true,true,follower,3,7,['rabbit@my-host',rabbit@b]}",
      { running: true, registered: true, raftState: 'follower', term: 3, lastIndex: 7, members: ['rabbit@my-host', 'rabbit@b'] },
    ],
    [
      '{true,true,pre_vote,11,179,[rabbit@rabbit1]}',
      { running: true, registered: true, raftState: 'pre_vote', term: 11, lastIndex: 179, members: ['rabbit@rabbit1'] },
    ],
    ['{false,false,none,-1,-1,none}', { running: false, registered: false, raftState: undefined, term: -1, lastIndex: -1, members: undefined }],
    ['{true,unknown,unknown,-1,-1,[a@b]}', { running: true, registered: undefined, raftState: undefined, term: -1, lastIndex: -1, members: ['a@b'] }],
    ['Error: noproc', undefined],
    ['', undefined],
  ])('%j', (printed, view) => {
    expect(parseCoordinatorView(printed)).toEqual(view);
  });
});

const view = (raftState: string | undefined, members: string[] | undefined, lastIndex = 10, term = 11): CoordinatorView => ({
  running: raftState !== undefined,
  registered: true,
  raftState,
  term,
  lastIndex,
  members,
});
const leads = (members = all, i = 10): CoordinatorView => view('leader', members, i);
const follows = (members = all, i = 10, term = 11): CoordinatorView => view('follower', members, i, term);
/** Killed within a second of its member starting: neither running nor registered. */
const lost: CoordinatorView = { running: false, registered: false, raftState: undefined, term: -1, lastIndex: -1, members: undefined };
const booting: CoordinatorView = { running: false, registered: true, raftState: undefined, term: -1, lastIndex: -1, members: undefined };
const views = (...v: (CoordinatorView | undefined)[]): Map<string, CoordinatorView | undefined> => new Map(all.map((n, i) => [n, v[i]]));
const r = (n: number): string => `rabbit@rabbit${n}`;

describe('coordinatorState', () => {
  it.each([
    ['every member runs', views(follows(), follows(), leads()), { leader: r(3), members: all, stranded: [], outside: [], majority: true }],
    [
      'one lost its name (a kill just after it started): stranded, the others a majority',
      views(lost, follows(), leads()),
      { leader: r(3), members: all, stranded: [r(1)], outside: [], majority: true },
    ],
    [
      'two lost theirs: no majority, no leader',
      views(lost, lost, view('candidate', all)),
      { leader: undefined, members: all, stranded: [r(1), r(2)], outside: [], majority: false },
    ],
    [
      'a member still registered (booting, or stopped) is not stranded',
      views(booting, follows(), leads()),
      { leader: r(3), members: all, stranded: [], outside: [], majority: true },
    ],
    [
      'a node that did not answer is not stranded',
      views(undefined, follows(), leads()),
      { leader: r(3), members: all, stranded: [], outside: [], majority: true },
    ],
    [
      'no coordinator yet (no stream ever declared): nothing',
      views(lost, lost, lost),
      { leader: undefined, members: [], stranded: [], outside: [], majority: false },
    ],
    [
      'a node the leader does not list, with no member: not stranded (the leader adds it)',
      views(lost, follows(all.slice(1)), leads(all.slice(1))),
      { leader: r(3), members: all.slice(1), stranded: [], outside: [], majority: true },
    ],
    [
      // Seen on CI's volumes: rabbit1 forgotten while the coordinator could not record it kept its
      // old member (pre_vote, listing all three); rabbit3 leads {2,3}, and rabbit2 was stranded.
      'a member running outside the leader’s list, beside a stranded one: outside, stranded, no majority',
      views(view('pre_vote', all, 179), lost, leads(all.slice(1), 220)),
      { leader: r(3), members: all.slice(1), stranded: [r(2)], outside: [r(1)], majority: false },
    ],
    [
      // The same after a restart: nobody leads; rabbit3's log is the latest, so its membership counts.
      'no leader: the membership of the member with the latest log',
      views(view('pre_vote', all, 179), lost, view('pre_vote', all.slice(1), 220)),
      { leader: undefined, members: all.slice(1), stranded: [r(2)], outside: [r(1)], majority: false },
    ],
    [
      'no leader, a later term wins over a longer log',
      views(view('candidate', all, 500, 11), follows(all.slice(1), 220, 12), view('candidate', all.slice(1), 220, 12)),
      { leader: undefined, members: all.slice(1), stranded: [], outside: [r(1)], majority: true },
    ],
  ])('%s', (_, v, state) => {
    expect(coordinatorState(v)).toEqual(state);
  });
});

describe('needsRepair and coordinatorWhole', () => {
  it.each([
    ['whole', views(follows(), follows(), leads()), false, true],
    ['no coordinator yet', views(lost, lost, lost), false, false],
    ['stranded', views(lost, follows(), leads()), true, false],
    ['outside', views(view('pre_vote', all), follows(all.slice(1)), leads(all.slice(1))), true, false],
    ['no majority', views(lost, lost, view('candidate', all)), true, false],
    ['a node not yet added back (the leader adds it on its next tick)', views(lost, follows(all.slice(1)), leads(all.slice(1))), false, false],
  ])('%s', (_, v, repair, whole) => {
    expect(needsRepair(coordinatorState(v))).toBe(repair);
    expect(coordinatorWhole(v, all)).toBe(whole);
  });
});

describe('coordinatorNudge', () => {
  it.each([
    ['whole: none', views(follows(), follows(), leads()), undefined],
    [
      'a node left out: the leadership moves to the other running member',
      views(lost, follows(all.slice(1)), leads(all.slice(1))),
      { deleteOutside: [], leader: r(3), moveTo: r(2) },
    ],
    [
      'a node left out whose member runs outside: deleted first',
      views(view('pre_vote', all), follows(all.slice(1)), leads(all.slice(1))),
      { deleteOutside: [r(1)], leader: r(3), moveTo: r(2) },
    ],
    ['no leader (an election under way): none', views(lost, view('candidate', all.slice(1)), view('candidate', all.slice(1))), undefined],
    ['the leader the only running member: nowhere to move', views(lost, lost, leads(all.slice(1))), { deleteOutside: [], leader: r(3), moveTo: undefined }],
  ])('%s', (_, v, nudge) => {
    expect(coordinatorNudge(v, all)).toEqual(nudge);
  });
});
