import type { Connection, ConnectionOptions } from 'rhea';
import { UsageError, errorMessage } from '../../errors.js';
import { connectAnyWith, type ConnectOptions } from '../connect-any.js';

/**
 * AMQP 1.0 connections (rhea) to the same URLs as AMQP 0-9-1: RabbitMQ 4 speaks both on port
 * 5672. The virtual host goes in the open frame's hostname as `vhost:<name>`; SASL PLAIN carries
 * the URL's user and password. Addresses are RabbitMQ 4's v2 form (/queues/<name>,
 * /exchanges/<name>/<key>).
 */

interface Connected10 {
  connection: Connection;
  url: string;
  index: number;
}

/** rhea's connection options for one amqp:// or amqps:// URL. Pure. */
export function connectionOptions10(url: string, o: { idleTimeoutMs: number; containerId?: string }): ConnectionOptions {
  const u = new URL(url);
  const tls = u.protocol === 'amqps:';
  // amqp://host/ is the vhost "" in the 0-9-1 URI spec, read by every client as "/"; %2F is "/".
  const path = u.pathname.replace(/^\//, '');
  const vhost = path === '' ? '/' : decodeURIComponent(path);
  const base = {
    host: u.hostname,
    port: u.port === '' ? (tls ? 5671 : 5672) : Number(u.port),
    username: decodeURIComponent(u.username || 'guest'),
    password: decodeURIComponent(u.password || 'guest'),
    hostname: `vhost:${vhost}`,
    reconnect: false,
    idle_time_out: o.idleTimeoutMs,
    ...(o.containerId === undefined ? {} : { container_id: o.containerId }),
  };
  return tls ? { ...base, transport: 'tls', servername: u.hostname } : base;
}

/** The address of exchange/routingKey in RabbitMQ 4's v2 form; the default exchange is the queue's own address. Pure. */
export function targetAddress(exchange: string, routingKey: string): string {
  if (exchange === '') return queueAddress(routingKey);
  return `/exchanges/${encodeURIComponent(exchange)}/${encodeURIComponent(routingKey)}`;
}

export function queueAddress(queue: string): string {
  if (queue === '') throw new UsageError('an AMQP 1.0 queue address needs a queue name');
  return `/queues/${encodeURIComponent(queue)}`;
}

/**
 * Open one connection to url: resolves when the broker's open frame arrives; rejects with the
 * socket's error (its code says whether a broker is there at all), the broker's error, or a
 * timeout after attemptTimeoutMs.
 */
async function dial10(url: string, o: { idleTimeoutMs: number; attemptTimeoutMs: number; containerId?: string }): Promise<Connection> {
  const { default: rhea } = await import('rhea');
  const container = rhea.create_container(o.containerId === undefined ? {} : { id: o.containerId });
  const connection = container.connect(connectionOptions10(url, o));
  return new Promise<Connection>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`no AMQP 1.0 open within ${o.attemptTimeoutMs} ms`)), o.attemptTimeoutMs);
    const cleanup = (): void => {
      clearTimeout(timer);
      connection.removeListener('connection_open', opened);
      connection.removeListener('disconnected', disconnected);
      connection.removeListener('connection_error', refused);
    };
    const fail = (err: Error): void => {
      cleanup();
      // Nothing more to hear from this one: no reconnect, no error events left unhandled.
      connection.on('disconnected', () => undefined);
      connection.on('connection_error', () => undefined);
      forget(connection);
      reject(err);
    };
    const opened = (): void => {
      cleanup();
      // A frame that breaks the protocol (rhea reads a close after the broker forced one) ends the
      // socket, and 'disconnected' says so; without a listener rhea also prints it to stderr.
      connection.on('protocol_error', () => undefined);
      resolve(connection);
    };
    const disconnected = (ctx: { error?: Error }): void => fail(ctx.error ?? new Error('disconnected before the AMQP 1.0 open'));
    const refused = (ctx: { connection: { error?: unknown } }): void =>
      fail(new Error(`the broker refused the connection: ${errorMessage(ctx.connection.error)}`));
    connection.once('connection_open', opened);
    connection.on('disconnected', disconnected);
    connection.on('connection_error', refused);
  });
}

/** connectAny over AMQP 1.0: the first URL that answers, from startIndex round the list, within the deadline. */
export function connectAny10(urls: readonly string[], startIndex: number, options: ConnectOptions & { containerId?: string }): Promise<Connected10> {
  return connectAnyWith(urls, startIndex, options, (url) =>
    dial10(url, {
      // The broker closes a connection silent for twice this; rhea sends empty frames at half of it.
      idleTimeoutMs: Math.max(1, options.heartbeatS) * 1000,
      attemptTimeoutMs: options.attemptTimeoutMs ?? 5_000,
      ...(options.containerId === undefined ? {} : { containerId: options.containerId }),
    }),
  );
}

/**
 * Close within timeoutMs: the close frame, the broker's close back, and the socket's end (rhea
 * clears its idle timers only once the socket has ended: a socket destroyed early leaves a 10 s
 * timer that keeps the process alive). A dead peer never answers: past the deadline the socket is
 * destroyed and the timers cleared.
 */
export async function closeWithin10(connection: Connection, timeoutMs = 2_000): Promise<void> {
  connection.on('connection_error', () => undefined);
  connection.on('error', () => undefined);
  const socket = (connection as unknown as { socket?: { destroyed?: boolean; once(event: 'close', f: () => void): void; end(): void } }).socket;
  if (socket === undefined || socket.destroyed === true) {
    forget(connection);
    return;
  }
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      forget(connection);
      resolve();
    }, timeoutMs);
    // rhea ends the socket after the broker's close arrives; its end clears rhea's timers.
    socket.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
    try {
      if (connection.is_open()) connection.close();
      else socket.end();
    } catch {
      // already closing
    }
  });
}

/** rhea keeps the socket on the connection without typing it. */
function destroySocket(connection: Connection): void {
  (connection as unknown as { socket?: { destroy?(): void } }).socket?.destroy?.();
}

/** The socket destroyed and rhea's idle and heartbeat timers cleared: nothing of this connection keeps the process alive. */
function forget(connection: Connection): void {
  destroySocket(connection);
  const timers = connection as unknown as { heartbeat_in?: NodeJS.Timeout; heartbeat_out?: NodeJS.Timeout; abort_idle?: NodeJS.Timeout };
  clearTimeout(timers.heartbeat_in);
  clearTimeout(timers.heartbeat_out);
  clearTimeout(timers.abort_idle);
}
