import type { Config } from '../../config.js';
import { BrokerUnavailableError, NotFoundError, RmqBenchError } from '../../errors.js';
import { maskUrl } from '../../url.js';
import { parseQueueLeadership, type QueueLeadership } from './queue-leadership.js';

export class HttpError extends RmqBenchError {
  constructor(
    readonly status: number,
    readonly url: string,
    /** The whole answer: a 503 of a health check carries its findings (src/cluster/broker/alarms.ts). */
    readonly body: string,
  ) {
    super(`HTTP ${status} from ${maskUrl(url)}: ${body.slice(0, 200)}`, 68);
  }
}

export interface ManagementOptions {
  /** Per request; a paused node never answers, so keep this short. */
  requestTimeoutMs?: number;
  /** A GET not answered within this long is also sent to the next endpoint (request). */
  hedgeAfterMs?: number;
  /** The endpoints are a broker the user named (--management-urls), not rmq-bench's own cluster. */
  named?: boolean;
}

export interface NodeInfo {
  name: string;
  running: boolean;
  mem_alarm?: boolean;
  disk_free_alarm?: boolean;
  /** Bytes: the memory high watermark in force, the disk free limit and the free space. */
  mem_limit?: number;
  disk_free_limit?: number;
  disk_free?: number;
  partitions?: string[];
  uptime?: number;
}

/**
 * The management HTTP API of the cluster, asked through any node that answers. Endpoints are
 * tried in order, starting with the last one that answered; `exclude` skips nodes (a node
 * under a fault).
 */
function unanswered(method: string, path: string, failures: readonly string[], named: boolean): BrokerUnavailableError {
  return new BrokerUnavailableError(`no management endpoint answered ${method} ${path} (${failures.join('; ') || 'all excluded'})`, {
    hint: named ? 'is the management API of the broker named by --management-urls up at that address?' : "is the cluster up? 'rmq-bench cluster up' starts it",
  });
}

/** 'fetch failed' says nothing: its cause's code (ECONNREFUSED) or message does. */
export function describeRequestError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as Error & { cause?: unknown }).cause;
  if (typeof cause === 'object' && cause !== null) {
    const code = 'code' in cause ? (cause as { code: unknown }).code : undefined;
    if (typeof code === 'string' && code !== '') return code;
    if (cause instanceof Error && cause.message !== '') return `${err.message}: ${cause.message}`;
  }
  return err.message.split('\n')[0] ?? err.message;
}

export class ManagementClient {
  private preferred = 0;
  private readonly auth: string;
  private readonly requestTimeoutMs: number;
  private readonly hedgeAfterMs: number;
  /** A broker the user named (--management-urls), not rmq-bench's own cluster: errors point at the URL. */
  readonly named: boolean;

  constructor(
    readonly endpoints: readonly { node: string; url: string }[],
    user: string,
    password: string,
    options: ManagementOptions = {},
  ) {
    this.auth = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 3_000;
    // A node answers a GET in a few ms (tens under load); one that has not in a second is
    // paused, cut off, or waiting on a stalled peer (in a partition /api/nodes hangs on all).
    this.hedgeAfterMs = Math.min(options.hedgeAfterMs ?? 1_000, this.requestTimeoutMs);
    this.named = options.named ?? false;
  }

  static fromConfig(config: Config, options?: ManagementOptions): ManagementClient {
    return new ManagementClient(
      config.nodes.map((n) => ({ node: n.name, url: `http://${config.host}:${n.managementPort}` })),
      config.user,
      config.password,
      options,
    );
  }

  /**
   * From --management-urls values (http://user:pass@host:15672, comma-separated). Credentials
   * come from the first URL that has them, else from the config.
   */
  static fromUrls(urls: readonly string[], fallbackUser: string, fallbackPassword: string, options?: ManagementOptions): ManagementClient {
    let user = fallbackUser;
    let password = fallbackPassword;
    let found = false;
    const endpoints = urls.map((raw) => {
      const u = new URL(raw);
      if (!found && u.username !== '') {
        user = decodeURIComponent(u.username);
        password = decodeURIComponent(u.password);
        found = true;
      }
      u.username = '';
      u.password = '';
      const url = u.toString().replace(/\/$/, '');
      return { node: u.host, url };
    });
    return new ManagementClient(endpoints, user, password, { ...options, named: true });
  }

  /** One request to one endpoint; `cancel` gives it up early (another endpoint answered). */
  async requestOn(baseUrl: string, method: string, path: string, body?: unknown, cancel?: AbortSignal, timeoutMs = this.requestTimeoutMs): Promise<unknown> {
    const url = `${baseUrl}${path}`;
    // A ref'd timer, not AbortSignal.timeout: that one is unref'd, so while a paused node holds
    // the request open nothing would keep the event loop alive and Node would exit (code 13, an
    // unsettled top-level await) instead of timing out.
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    try {
      const res = await fetch(url, {
        method,
        headers: { authorization: this.auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: cancel ? AbortSignal.any([ac.signal, cancel]) : ac.signal,
      });
      const text = await res.text();
      if (!res.ok) throw new HttpError(res.status, url, text);
      return text === '' ? undefined : JSON.parse(text);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * A request through the first endpoint that answers. An HTTP error (404, 400) is the
   * cluster's answer and is thrown at once; a connection failure moves to the next node. A GET
   * is hedged: not answered within hedgeAfterMs, it goes to the next endpoint as well, and the
   * first answer wins (the others are cancelled). During a partition, when every node holds
   * /api/nodes for the whole 3 s timeout, a round fails after 5 s instead of 9; with one node
   * paused, the next one answers after 1 s instead of 3.
   */
  async request(method: string, path: string, options: { body?: unknown; exclude?: readonly string[]; timeoutMs?: number } = {}): Promise<unknown> {
    if (method === 'GET') return this.hedged(path, options.exclude);
    const n = this.endpoints.length;
    const failures: string[] = [];
    for (let i = 0; i < n; i++) {
      const idx = (this.preferred + i) % n;
      const ep = this.endpoints[idx]!;
      if (options.exclude?.includes(ep.node)) continue;
      try {
        const result = await this.requestOn(ep.url, method, path, options.body, undefined, options.timeoutMs);
        this.preferred = idx;
        return result;
      } catch (err) {
        if (err instanceof HttpError && err.status !== 503) throw err;
        failures.push(`${ep.node}: ${describeRequestError(err)}`);
      }
    }
    throw unanswered(method, path, failures, this.named);
  }

  /** A GET through the endpoints in turn, the next one starting when the last fails or is slow (request). */
  private hedged(path: string, exclude?: readonly string[]): Promise<unknown> {
    const n = this.endpoints.length;
    const order = Array.from({ length: n }, (_, i) => (this.preferred + i) % n).filter((idx) => !exclude?.includes(this.endpoints[idx]!.node));
    if (order.length === 0) return Promise.reject(unanswered('GET', path, [], this.named));
    const cancel = new AbortController();
    const failures: string[] = [];
    return new Promise((resolve, reject) => {
      let started = 0;
      let failed = 0;
      let done = false;
      const finish = (settle: () => void): void => {
        done = true;
        cancel.abort();
        settle();
      };
      const startNext = (): void => {
        if (done || started >= order.length) return;
        const idx = order[started++]!;
        const ep = this.endpoints[idx]!;
        const hedge = setTimeout(startNext, this.hedgeAfterMs);
        this.requestOn(ep.url, 'GET', path, undefined, cancel.signal).then(
          (result) => {
            clearTimeout(hedge);
            if (done) return;
            this.preferred = idx;
            finish(() => resolve(result));
          },
          (err: unknown) => {
            clearTimeout(hedge);
            if (done) return;
            if (err instanceof HttpError && err.status !== 503) return finish(() => reject(err));
            failures.push(`${ep.node}: ${describeRequestError(err)}`);
            if (++failed === order.length) return finish(() => reject(unanswered('GET', path, failures, this.named)));
            startNext();
          },
        );
      };
      startNext();
    });
  }

  get(path: string, exclude?: readonly string[]): Promise<unknown> {
    return this.request('GET', path, exclude ? { exclude } : {});
  }

  async queue(vhost: string, name: string, exclude?: readonly string[]): Promise<QueueLeadership & { raw: Record<string, unknown> }> {
    try {
      const raw = (await this.get(`/api/queues/${encodeURIComponent(vhost)}/${encodeURIComponent(name)}`, exclude)) as Record<string, unknown>;
      return { ...parseQueueLeadership(raw), raw };
    } catch (err) {
      if (err instanceof HttpError && err.status === 404) {
        throw new NotFoundError(`queue '${name}' does not exist in vhost '${vhost}'`, { cause: err });
      }
      throw err;
    }
  }

  async queues(vhost: string, exclude?: readonly string[]): Promise<QueueLeadership[]> {
    const list = (await this.get(`/api/queues/${encodeURIComponent(vhost)}?disable_stats=true&enable_queue_totals=true`, exclude)) as unknown[];
    return list.map(parseQueueLeadership);
  }

  async nodes(exclude?: readonly string[]): Promise<NodeInfo[]> {
    return (await this.get('/api/nodes', exclude)) as NodeInfo[];
  }

  async overviewOn(baseUrl: string): Promise<{ rabbitmq_version?: string; erlang_version?: string; node?: string; cluster_name?: string }> {
    return (await this.requestOn(baseUrl, 'GET', '/api/overview')) as { rabbitmq_version?: string; erlang_version?: string; node?: string };
  }
}
