import { UsageError } from '../../errors.js';

/**
 * The pure half of the native stream protocol's producer: where it connects (rabbitmq-stream://
 * URLs, one per node, on the ports the nodes advertise), how a run names itself to the broker for
 * deduplication (the publisher reference), and how a sequence maps to its publishing id.
 */

/** The scheme of a native stream protocol URL. */
export const STREAM_SCHEME = 'rabbitmq-stream:';

/** What the stream client needs to connect: host, port, user, password, virtual host. */
export interface StreamEndpoint {
  hostname: string;
  port: number;
  username: string;
  password: string;
  vhost: string;
}

/** A rabbitmq-stream:// URL's parts (config.ts's streamUrl; no path: the virtual host '/'); a UsageError for anything else. Pure. */
export function parseStreamUrl(url: string): StreamEndpoint {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new UsageError('a stream URL is not a URL (example: rabbitmq-stream://demo:demo@127.0.0.1:5552)');
  }
  if (u.protocol !== STREAM_SCHEME || u.hostname === '' || u.port === '') {
    throw new UsageError('a stream URL is not rabbitmq-stream://user:password@host:port (example: rabbitmq-stream://demo:demo@127.0.0.1:5552)');
  }
  const path = u.pathname.replace(/^\//, '');
  return {
    hostname: u.hostname,
    port: Number(u.port),
    username: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    vhost: path === '' ? '/' : decodeURIComponent(path),
  };
}

/**
 * The publisher reference of a run: the broker keeps, per stream and reference, the highest
 * publishing id it has stored, and drops a message whose id is not above it (deduplication).
 * One per run, so that a run never shares its ids with another. Pure.
 */
export function publisherRefOf(runId: string): string {
  return `rmq-bench-${runId}`;
}

/** A sequence's publishing id: seq + 1 (the broker's last id for a reference it has not seen is 0). Pure. */
export function publishingIdOf(seq: number): bigint {
  return BigInt(seq) + 1n;
}

/** The sequence a publishing id was given to. Pure. */
export function seqOfPublishingId(id: bigint): number {
  return Number(id - 1n);
}

/**
 * Of the sequences about to be sent again (in doubt after a lost connection), how many the
 * broker had stored already: their publishing id is at most the last one it holds for the
 * reference, so deduplication drops the copy (and the broker confirms it). Pure.
 */
export function coveredByStored(seqs: readonly number[], storedUpTo: bigint): number {
  let n = 0;
  for (const seq of seqs) if (publishingIdOf(seq) <= storedUpTo) n++;
  return n;
}

/** Room left in a publish frame for what is not the body: the frame's header, the message's properties and rmq-bench's headers. */
export const FRAME_HEADROOM_BYTES = 1024;

/**
 * Why a body of bodyBytes cannot be published over the stream protocol whose connection
 * negotiated frames of at most frameMaxBytes (0: unlimited), or undefined. A message must fit one
 * frame: the client library refuses a larger one on every send, so a run would never end. Pure.
 */
export function frameProblem(bodyBytes: number, frameMaxBytes: number): string | undefined {
  if (frameMaxBytes === 0 || bodyBytes + FRAME_HEADROOM_BYTES <= frameMaxBytes) return undefined;
  return `-s/--size ${bodyBytes} does not fit one stream frame: the broker takes frames of at most ${frameMaxBytes} bytes (stream.frame_max), ${FRAME_HEADROOM_BYTES} of them for the headers; use --size ${frameMaxBytes - FRAME_HEADROOM_BYTES} or less`;
}

/** The client library's own batch: at most this many messages in one publish frame. */
export const LIBRARY_CHUNK_MESSAGES = 100;

/**
 * How many messages of bodyBytes one publish frame may carry within frameMaxBytes (0:
 * unlimited), at least 1. The client library batches by count alone, so large bodies in its
 * default batch make a frame the broker refuses (it closes the connection, and the run would send
 * again forever). Pure.
 */
export function messagesPerFrame(bodyBytes: number, frameMaxBytes: number): number {
  if (frameMaxBytes === 0) return LIBRARY_CHUNK_MESSAGES;
  return Math.max(1, Math.min(LIBRARY_CHUNK_MESSAGES, Math.floor(frameMaxBytes / (bodyBytes + FRAME_HEADROOM_BYTES))));
}
