import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { portIsFree } from '../../src/cluster/lifecycle/ports.js';
import { ExitCode, PortTakenError } from '../../src/errors.js';

describe('portIsFree (loopback only)', () => {
  it('is false while another process listens on the port, true once it is gone', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    expect(await portIsFree(port)).toBe(false);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expect(await portIsFree(port)).toBe(true);
  });
});

describe('PortTakenError', () => {
  it('names the port and what needs it, with exit code 73', () => {
    const err = new PortTakenError(5673, 'rabbit2 AMQP');
    expect(err.message).toBe('port 5673 on 127.0.0.1 is taken by another process (needed for rabbit2 AMQP)');
    expect(err.exitCode).toBe(ExitCode.resourceTaken);
    expect(err.hint).toContain('5673');
  });
});
