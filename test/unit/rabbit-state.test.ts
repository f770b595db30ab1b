import { describe, expect, it } from 'vitest';
import { parseRabbitState } from '../../src/cluster/rabbit-state.js';

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
