import type { Client, Publisher } from 'rabbitmq-stream-js-client';
import { errorMessage, UsageError } from '../../errors.js';
import { connectAnyWith } from '../connect-any.js';
import { type FlushOutcome, freshLoopSession, type LoopSession, type PublishTransport, type SessionEvents } from '../publish-loop.js';
import { frameProblem, messagesPerFrame, parseStreamUrl } from './stream-ids.js';

/**
 * One native stream protocol session, as the publisher uses it: a client connected to the first
 * node that answers (its locator connection), and a publisher declared with the run's reference
 * on the stream's leader (the client asks the locator for the stream's metadata and connects to
 * the host and port the leader advertises). Lost once: the leader's connection closed, or the
 * stream's metadata changed under it (its leader moved). Closed at the end with a deadline.
 */

export interface StreamSession extends LoopSession {
  readonly client: Client;
  readonly publisher: Publisher;
  /** The last publishing id the broker had stored for the run's reference when the session opened. */
  readonly storedUpTo: bigint;
  /** The book's tag of each sequence awaiting its confirm on this session. */
  readonly tags: Map<number, number>;
  /** Sends on it so far: the last one's tag in the confirm book. */
  sent: number;
  /** Given up by the loop: confirms still coming in on it are not counted. */
  dropped: boolean;
}

/** How long each step on one node may take: connect, declare the publisher on the leader, ask the last publishing id. */
const ATTEMPT_TIMEOUT_MS = 5_000;
/** How long the end may take to close the client before its sockets are destroyed. */
const CLOSE_TIMEOUT_MS = 2_000;

/** The library's internals this session reaches into: the sockets, heartbeats and send queue it keeps private. */
interface ConnectionInternals {
  socket?: { destroy(): void; writableLength?: number };
  heartbeat?: { stop(): void };
}
interface PublisherInternals {
  connection?: ConnectionInternals;
  queue?: unknown[];
}
interface ClientInternals {
  locatorConnection?: ConnectionInternals;
  pool?: { connectionsMap?: Map<string, ConnectionInternals[]> };
}

/**
 * Stop a session's client at once, whatever state it is in: the publisher's unsent messages
 * dropped (the library would retry them on a setImmediate loop for as long as its connection is
 * not ready), the heartbeats of every connection it opened stopped and their sockets destroyed
 * (also of a publisher's connection whose declaration did not finish).
 */
function stopHard(client: Client, publisher: Publisher | undefined): void {
  const p = publisher as unknown as PublisherInternals | undefined;
  if (p?.queue) p.queue.length = 0;
  const c = client as unknown as ClientInternals;
  const pooled = [...(c.pool?.connectionsMap?.values() ?? [])].flat();
  for (const conn of [p?.connection, c.locatorConnection, ...pooled]) {
    conn?.heartbeat?.stop();
    conn?.socket?.destroy();
  }
}

/** Where a session starts: past the node of the session just lost (several nodes), else where the loop says. Pure. */
export function nextStart(startIndex: number, lostIndex: number | undefined, urlCount: number): number {
  return urlCount > 1 && lostIndex === startIndex ? (startIndex + 1) % urlCount : startIndex;
}

/** A promise's value within ms, else the error `what` names. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

interface Dialled {
  client: Client;
  publisher: Publisher;
  storedUpTo: bigint;
  /** The leader's connection closed: the session's loss (set once the session exists). */
  onClosed: (why: string) => void;
  /** Why it closed before the session existed (the session is then lost at once). */
  closedWhy?: string;
}

/** Connect to one node, declare the publisher on the stream's leader, ask what the broker stored for the reference. */
async function dial(
  url: string,
  stream: string,
  publisherRef: string,
  bodyBytes: number,
  heartbeatS: number,
  connectionName: string | undefined,
): Promise<Dialled> {
  const { connect } = await import('rabbitmq-stream-js-client');
  const endpoint = parseStreamUrl(url);
  const early = {
    closedWhy: undefined as string | undefined,
    onClosed: (why: string): void => {
      early.closedWhy ??= why;
    },
  };
  const connecting = connect({ ...endpoint, heartbeat: heartbeatS, ...(connectionName ? { connectionName } : {}) });
  const client = await within(connecting, ATTEMPT_TIMEOUT_MS, `connecting to ${endpoint.hostname}:${endpoint.port}`).catch((err: unknown) => {
    // A connection that opens after its deadline is stopped then: nothing outlives the run.
    connecting.then((late) => stopHard(late, undefined)).catch(() => undefined);
    throw err;
  });
  let publisher: Publisher | undefined;
  try {
    publisher = await within(
      client.declarePublisher({
        stream,
        publisherRef,
        maxChunkLength: messagesPerFrame(bodyBytes, client.maxFrameSize),
        connectionClosedListener: (hadError) => early.onClosed(hadError ? "the leader's connection closed with an error" : "the leader's connection closed"),
      }),
      ATTEMPT_TIMEOUT_MS,
      `declaring a publisher on ${stream}`,
    );
    const storedUpTo = await within(publisher.getLastPublishingId(), ATTEMPT_TIMEOUT_MS, `asking the last publishing id of ${publisherRef}`);
    return Object.assign(early, { client, publisher, storedUpTo });
  } catch (err) {
    stopHard(client, publisher);
    throw err;
  }
}

/**
 * The PublishLoop's native stream sessions to `stream`, with the run's publisher reference. Any
 * node locates the leader, so after a lost session the next one starts on the next node: the
 * node whose connection just closed is likely the one faulted, and a node being killed can take
 * a connection and answer nothing until the attempt's deadline. The end closes the client (its
 * publisher flushed first) within a deadline.
 */
export function streamTransport(stream: string, publisherRef: string, bodyBytes: number): PublishTransport<StreamSession> {
  let lostIndex: number | undefined;
  return {
    async open(o, events: SessionEvents<StreamSession>) {
      const start = nextStart(o.startIndex, lostIndex, o.urls.length);
      const c = await connectAnyWith(o.urls, start, { heartbeatS: o.heartbeatS, timeoutMs: o.timeoutMs, signal: o.signal }, (url) =>
        dial(url, stream, publisherRef, bodyBytes, o.heartbeatS, o.connectionName),
      );
      const { client, publisher, storedUpTo } = c.connection;
      const tooBig = frameProblem(bodyBytes, client.maxFrameSize);
      if (tooBig !== undefined) {
        stopHard(client, publisher);
        throw new UsageError(tooBig);
      }
      // The stream protocol has no connection.blocked (blockedBy stays null); the window bounds what awaits a confirm.
      const { base, markLost } = freshLoopSession(c.url, c.index);
      const s: StreamSession = { ...base, client, publisher, storedUpTo, tags: new Map(), sent: 0, dropped: false };
      let reported = false;
      const lose = (why: string): void => {
        if (reported) return;
        reported = true;
        lostIndex = s.index;
        events.onLost(s, why);
        markLost();
      };
      c.connection.onClosed = lose;
      if (c.connection.closedWhy !== undefined) lose(c.connection.closedWhy);
      // The broker tells a publisher's connection when its stream's topology changes (the leader
      // moved, the stream was deleted): the publisher is gone on that node.
      publisher.on('metadata_update', (m) => {
        if (m.metadataInfo.stream === stream) lose(`the stream's metadata changed (code ${m.metadataInfo.code}): its leader moved`);
      });
      return s;
    },
    isFatal: (err) => err instanceof UsageError,
    async close(s, o) {
      let channel: FlushOutcome['channel'] = 'closed';
      try {
        await within(
          (async () => {
            await s.publisher.flush();
            await s.client.close();
          })(),
          Math.min(o.flushTimeoutMs, CLOSE_TIMEOUT_MS),
          'closing the stream client',
        );
      } catch (err) {
        channel = /within/.test(errorMessage(err)) ? 'timeout' : 'lost';
      }
      o.afterFlush();
      stopHard(s.client, s.publisher);
      return { channel, blockedBy: null, bufferedBytes: 0, bytesPerPublish: 0 };
    },
    drop(s) {
      stopHard(s.client, s.publisher);
    },
  };
}
