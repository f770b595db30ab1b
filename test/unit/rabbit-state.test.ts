import { describe, expect, it } from 'vitest';
import { parseOwnClusterView, parseRabbitState } from '../../src/cluster/mend/rabbit-state.js';

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
