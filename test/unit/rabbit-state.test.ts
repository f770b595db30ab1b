import { describe, expect, it } from 'vitest';
import { parseAutohealState, parseOwnClusterView, parseRabbitState } from '../../src/cluster/mend/rabbit-state.js';

describe('parseRabbitState: what {rabbit:is_running(), rabbit:is_booting()} printed', () => {
  it.each([
    ['{true,false}\n', 'running'],
    ['{false,true}\n', 'booting'],
    ['{false,false}\n', 'stopped'],
    ['{ false , false }', 'stopped'],
    // rabbitmqctl eval (an image without erl_call) prints the term the same way
    ['{true,false}', 'running'],
    ['', undefined],
    ['{badrpc,nodedown}', undefined],
  ] as const)('%j: %s', (printed, state) => {
    expect(parseRabbitState(printed)).toBe(state);
  });
});

describe('parseOwnClusterView: what {rabbit_mnesia:cluster_nodes(running), rabbit_node_monitor:partitions()} printed', () => {
  it.each([
    // erl_call, io:format ~w
    ['{[rabbit@rabbit2,rabbit@rabbit3,rabbit@rabbit1],[rabbit@rabbit1]}\n', ['rabbit@rabbit2', 'rabbit@rabbit3', 'rabbit@rabbit1'], ['rabbit@rabbit1']],
    ['{[rabbit@rabbit1],[]}', ['rabbit@rabbit1'], []],
    // rabbitmqctl eval (no erl_call): quoted atoms, and a long list broken over lines
    ["{['rabbit@rabbit1',\n  'rabbit@rabbit2'],\n []}", ['rabbit@rabbit1', 'rabbit@rabbit2'], []],
    ['', undefined, undefined],
    ['{badrpc,nodedown}', undefined, undefined],
  ] as const)('%j', (printed, running, partitions) => {
    const view = parseOwnClusterView(printed);
    if (running === undefined) expect(view).toBeUndefined();
    else expect(view).toEqual({ running, partitions });
  });
});

describe("parseAutohealState: the autoheal field of the node monitor's state", () => {
  it.each([
    ['not_healing\n', 'idle'],
    // rabbitmqctl eval prints the expression's value after what io:format printed
    ['not_healing\nok\n', 'idle'],
    ["{winner_waiting,['rabbit@rabbit1'],['rabbit@rabbit1']}\n", 'healing'],
    ['{leader_waiting,rabbit@rabbit3,[rabbit@rabbit1]}', 'healing'],
    ['restarting', 'healing'],
    // 4.3: the node monitor's state has another shape
    ['unknown\n', undefined],
    ['', undefined],
    ['{badrpc,nodedown}', undefined],
  ] as const)('%j: %s', (printed, state) => {
    expect(parseAutohealState(printed)).toBe(state);
  });
});
