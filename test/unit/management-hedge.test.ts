import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { BrokerUnavailableError } from '../../src/errors.js';
import { HttpError, ManagementClient } from '../../src/cluster/broker/management.js';

/** What a stand-in endpoint does with a request. */
type Behaviour = 'answer' | 'hang' | '404' | '503';

interface Endpoint {
  url: string;
  behaviour: Behaviour;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** Stand-in endpoints on 127.0.0.1, logging in order into `events`: `n1 got GET /path`, `n1 closed` (the client gave up). */
async function endpoints(behaviours: Behaviour[], events: string[]): Promise<Endpoint[]> {
  return Promise.all(
    behaviours.map(async (behaviour, i) => {
      const name = `n${i + 1}`;
      const ep: Endpoint = { url: '', behaviour };
      const server = createServer((req: IncomingMessage, res: ServerResponse) => {
        events.push(`${name} got ${req.method} ${req.url}`);
        res.on('close', () => {
          if (!res.writableEnded) events.push(`${name} closed`);
        });
        if (ep.behaviour === 'hang') return;
        if (ep.behaviour === '404') return void res.writeHead(404).end('{"error":"Object Not Found"}');
        if (ep.behaviour === '503') return void res.writeHead(503).end('{"status":"failed"}');
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ from: name }));
      });
      servers.push(server);
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      ep.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      return ep;
    }),
  );
}

/**
 * A request's deadline: what the hanging cases wait, and what a local answer must come within
 * while the unit tests run beside fifteen nodes booting (400 ms is not enough there). The hanging
 * cases pay it in idle time only.
 */
const TIMEOUT_MS = 2_000;

function client(eps: Endpoint[], options = { requestTimeoutMs: TIMEOUT_MS, hedgeAfterMs: 50 }): ManagementClient {
  // n1, n2... in the order given; the first is asked first.
  return new ManagementClient(
    eps.map((e, i) => ({ node: `n${i + 1}`, url: e.url })),
    'u',
    'p',
    options,
  );
}

/** Until the servers have seen their clients go (a cancelled request closes a moment later). */
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 100));

describe('ManagementClient: a GET is hedged across the endpoints', () => {
  it('the preferred endpoint answering: one request, no other endpoint asked', async () => {
    const events: string[] = [];
    const eps = await endpoints(['answer', 'answer', 'answer'], events);
    // A hedge far beyond a local answer (a process's first fetch takes tens of ms to set up).
    expect(await client(eps, { requestTimeoutMs: 5_000, hedgeAfterMs: 2_000 }).get('/api/nodes')).toEqual({ from: 'n1' });
    await settle();
    expect(events).toEqual(['n1 got GET /api/nodes']);
  });

  it('the preferred endpoint hanging: the next one is asked too, answers, and the hanging request is cancelled', async () => {
    const events: string[] = [];
    // Two endpoints: with a third, a slow first answer from n2 would bring n3 in too.
    const eps = await endpoints(['hang', 'answer'], events);
    const mgmt = client(eps);
    expect(await mgmt.get('/api/nodes')).toEqual({ from: 'n2' });
    await settle();
    expect(events).toEqual(['n1 got GET /api/nodes', 'n2 got GET /api/nodes', 'n1 closed']);
    // The endpoint that answered is asked first next time.
    events.length = 0;
    expect(await mgmt.get('/api/overview')).toEqual({ from: 'n2' });
    expect(events).toEqual(['n2 got GET /api/overview']);
  });

  it('a refused connection moves on at once, without waiting for the hedge', async () => {
    const events: string[] = [];
    const eps = await endpoints(['answer', 'answer', 'answer'], events);
    const closed = servers[0]!;
    closed.closeAllConnections();
    await new Promise((r) => closed.close(r));
    // A hedge longer than the timeout would never fire: only the refusal can move it on.
    expect(await client(eps, { requestTimeoutMs: 5_000, hedgeAfterMs: 5_000 }).get('/api/nodes')).toEqual({ from: 'n2' });
    expect(events).toEqual(['n2 got GET /api/nodes']);
  });

  it("an HTTP error is the cluster's answer: thrown at once, the others cancelled", async () => {
    const events: string[] = [];
    const eps = await endpoints(['hang', '404'], events);
    const err = await client(eps)
      .get('/api/queues/%2F/nope')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpError);
    expect((err as HttpError).status).toBe(404);
    await settle();
    expect(events).toEqual(['n1 got GET /api/queues/%2F/nope', 'n2 got GET /api/queues/%2F/nope', 'n1 closed']);
  });

  it('a 503 (a node not ready) moves on like a failure', async () => {
    const events: string[] = [];
    const eps = await endpoints(['503', 'answer'], events);
    expect(await client(eps).get('/api/nodes')).toEqual({ from: 'n2' });
  });

  it('every endpoint hanging: one error naming each, once the last has timed out', async () => {
    const events: string[] = [];
    const eps = await endpoints(['hang', 'hang', 'hang'], events);
    const err = await client(eps)
      .get('/api/nodes')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BrokerUnavailableError);
    expect((err as Error).message).toMatch(
      new RegExp(`^no management endpoint answered GET /api/nodes \\(n1: .*no answer within ${TIMEOUT_MS} ms; n2: .*; n3: .*\\)$`),
    );
    expect(events.filter((e) => e.endsWith('got GET /api/nodes'))).toEqual(['n1 got GET /api/nodes', 'n2 got GET /api/nodes', 'n3 got GET /api/nodes']);
  });

  it('an excluded node is never asked', async () => {
    const events: string[] = [];
    const eps = await endpoints(['answer', 'hang', 'answer'], events);
    const mgmt = client(eps);
    expect(await mgmt.get('/api/nodes', ['n1', 'n2'])).toEqual({ from: 'n3' });
    expect(events).toEqual(['n3 got GET /api/nodes']);
    await expect(mgmt.get('/api/nodes', ['n1', 'n2', 'n3'])).rejects.toThrow('(all excluded)');
  });

  it('a request that changes something is not hedged: the next endpoint only after the first has failed', async () => {
    const events: string[] = [];
    const eps = await endpoints(['hang', 'answer', 'answer'], events);
    expect(await client(eps).request('PUT', '/api/policies/%2F/p', { body: { pattern: 'x' } })).toEqual({ from: 'n2' });
    expect(events).toEqual(['n1 got PUT /api/policies/%2F/p', 'n1 closed', 'n2 got PUT /api/policies/%2F/p']);
  });
});
