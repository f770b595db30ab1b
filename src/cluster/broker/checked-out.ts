import { erlangBinary, type NodeCall } from './erl-call.js';

/**
 * How many messages a quorum queue has checked out to consumers (delivered, not yet settled), and
 * how many consumers it keeps, as its member on the node asked holds them now: its Raft state
 * machine's own overview (rabbit_fifo), read in the node through erl_call. The management API's
 * counts of a queue lag (a statistics tick, and after a leader change longer); this does not.
 */
export function checkedOutCall(ref: { vhost: string; queue: string }): NodeCall {
  const expr = [
    `case rabbit_amqqueue:lookup(rabbit_misc:r(${erlangBinary(ref.vhost)}, queue, ${erlangBinary(ref.queue)})) of`,
    '  {ok, Q} -> case amqqueue:get_pid(Q) of',
    '    {RaName, _} -> case ra:local_query({RaName, node()}, fun rabbit_fifo:overview/1, 2000) of',
    '      {ok, {_, O}, _} -> io:format("checked_out ~p consumers ~p~n", [maps:get(num_checked_out, O), maps:get(num_consumers, O)]);',
    '      E -> io:format("no_answer ~p~n", [E]) end;',
    '    _ -> io:format("not_quorum~n") end;',
    '  _ -> io:format("no_queue~n") end, ok.',
  ].join('\n');
  return { expr, cli: ['rabbitmqctl', 'eval', expr] };
}

/** The answer of checkedOutCall: the counts, or null when the member gave none (no such queue, not a quorum queue, no answer). Pure. */
export function parseCheckedOut(output: string): { checkedOut: number; consumers: number } | null {
  const m = /checked_out (\d+) consumers (\d+)/.exec(output);
  return m ? { checkedOut: Number(m[1]), consumers: Number(m[2]) } : null;
}
