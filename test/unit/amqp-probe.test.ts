import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { amqpAnswers } from '../../src/cluster/lifecycle/readiness.js';

/**
 * The readiness probe against local sockets that behave as the three cases a node's published
 * port can be in: a listener that answers the header, docker's port proxy in front of a node not
 * listening yet (accepts, then closes), and nothing at all on the port.
 */
const servers: net.Server[] = [];
const sockets: net.Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

async function serve(onConnection: (socket: net.Socket) => void): Promise<number> {
  const server = net.createServer((socket) => {
    sockets.push(socket);
    onConnection(socket);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as net.AddressInfo).port;
}

describe('amqpAnswers', () => {
  it('a listener that answers the protocol header: open', async () => {
    let header = Buffer.alloc(0);
    const port = await serve((s) =>
      s.on('data', (d) => {
        header = Buffer.concat([header, d]);
        if (header.length >= 8) s.write(Buffer.from([1, 0, 0, 0, 0, 0, 4]));
      }),
    );
    expect(await amqpAnswers('127.0.0.1', port)).toBe(true);
    expect(header.toString('latin1')).toBe('AMQP\x00\x00\x09\x01');
  });

  it('a proxy that accepts and closes: not open', async () => {
    const port = await serve((s) => s.end());
    expect(await amqpAnswers('127.0.0.1', port)).toBe(false);
  });

  it('a listener that never answers: not open, within the probe timeout', async () => {
    const port = await serve(() => undefined);
    const started = performance.now();
    expect(await amqpAnswers('127.0.0.1', port)).toBe(false);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('nothing on the port: not open', async () => {
    const port = await serve(() => undefined);
    await new Promise((resolve) => servers.pop()?.close(resolve));
    expect(await amqpAnswers('127.0.0.1', port)).toBe(false);
  });

  it('aborted: not open', async () => {
    const port = await serve(() => undefined);
    const ac = new AbortController();
    const answer = amqpAnswers('127.0.0.1', port, ac.signal);
    ac.abort();
    expect(await answer).toBe(false);
  });
});
