import { access } from 'node:fs/promises';
import { EnvironmentError, errorMessage } from '../../errors.js';
import { withDeadline } from '../../util/retry.js';
import type { Docker } from './engine.js';

/**
 * Faults inside a node's network namespace, from the host: `nsenter -t <pid> -n iptables …` cuts
 * the node off from its cluster peers (a partition: the host, its AMQP clients, still reach it),
 * `nsenter -t <pid> -n tc qdisc … netem` delays (and drops) its traffic, and `… tbf` limits its
 * bandwidth (a slow link). Every rule carries
 * RULE_COMMENT, so that exactly what was added is removed, and `cluster up` finds what a killed
 * run left behind.
 */

export const RULE_COMMENT = 'rmq-bench';

/** Runs a host command; resolves with its exit code and output. Injectable for unit tests. */
export type HostRunner = (file: string, args: readonly string[]) => Promise<{ exitCode: number; output: string }>;

export async function hostRunner(): Promise<HostRunner> {
  const { execa } = await import('execa');
  return async (file, args) => {
    const r = await withDeadline(
      () => execa(file, [...args], { reject: false, stdin: 'ignore', all: true, timeout: 15_000 }),
      20_000,
      `${file} ${args.join(' ')} did not finish`,
    );
    return { exitCode: r.exitCode ?? -1, output: String(r.all ?? '') };
  };
}

/** The iptables rules (without -I/-D) that cut the node off from one peer, both directions. Pure. */
export function partitionRules(peerIp: string): string[][] {
  const tag = ['-m', 'comment', '--comment', RULE_COMMENT, '-j', 'DROP'];
  return [
    ['INPUT', '-s', peerIp, ...tag],
    ['OUTPUT', '-d', peerIp, ...tag],
  ];
}

/** The delay, jitter and loss of a netem qdisc (the latency fault's NetemSpec, src/faults/net/netem.ts). */
interface NetemArgs {
  delayMs: number;
  jitterMs: number;
  lossPct: number;
}

/** tc arguments (after `tc qdisc add dev <if> root`) for the netem spec. Pure. */
export function netemArgs(spec: NetemArgs): string[] {
  const args = ['netem', 'delay', `${spec.delayMs}ms`];
  if (spec.jitterMs > 0) args.push(`${spec.jitterMs}ms`);
  if (spec.lossPct > 0) args.push('loss', `${spec.lossPct}%`);
  return args;
}

/** tc arguments (after `tc qdisc add dev <if> root`) that limit what the node sends to `rate` (tc's units: 256kbit, 1mbit). Pure. */
export function tbfArgs(rate: string): string[] {
  // burst: at least one full-size frame (1,514 bytes); latency: how long a packet may wait before it is dropped.
  return ['tbf', 'rate', rate, 'burst', '32kbit', 'latency', '400ms'];
}

/**
 * Our rules in `iptables -S` output, as arguments for `iptables -D`. Pure: a rule without our
 * comment is never touched.
 */
export function ourRules(iptablesS: string): string[][] {
  const out: string[][] = [];
  for (const line of iptablesS.split('\n')) {
    const m = /^-A (INPUT|OUTPUT) (.*)$/.exec(line.trim());
    if (!m || !line.includes(`--comment ${RULE_COMMENT}`)) continue;
    out.push([m[1]!, ...m[2]!.split(/\s+/).map((a) => a.replace(/^"(.*)"$/, '$1'))]);
  }
  return out;
}

/** The rules of `added` (as given to `iptables -I`) that `iptables -S` still lists, where addresses carry /32. Pure. */
export function rulesLeft(added: readonly (readonly string[])[], iptablesS: string): string[][] {
  const key = (r: readonly string[]): string => r.join(' ').replace(/\/32(?=\s|$)/g, '');
  const present = ourRules(iptablesS).map(key);
  return added.filter((r) => present.includes(key(r))).map((r) => [...r]);
}

/**
 * An undo checked: none of the rules it removed is still in the container's namespace. One that
 * is (a defect of the undo) is removed again, so the node is not left cut off, and the undo fails
 * with an error naming it.
 */
export async function expectRulesGone(run: HostRunner, pid: number, container: string, removed: readonly (readonly string[])[]): Promise<void> {
  const left = rulesLeft(removed, await inNetns(run, pid, ['iptables', '-w', '-S']));
  if (left.length === 0) return;
  for (const rule of left) await inNetns(run, pid, ['iptables', '-w', '-D', ...rule]);
  throw new EnvironmentError(
    `${container}: undoing the fault left ${left.length} iptables rule${left.length === 1 ? '' : 's'} (removed since): ${left.map((r) => r.join(' ')).join('; ')}`,
  );
}

/** Interfaces in `ip -o link show` output that carry traffic (everything but loopback). Pure. */
export function linkNames(ipOLink: string): string[] {
  const names: string[] = [];
  for (const line of ipOLink.split('\n')) {
    const m = /^\d+:\s+([^:@\s]+)(@[^:]+)?:/.exec(line.trim());
    if (m && m[1] !== 'lo') names.push(m[1]!);
  }
  return names;
}

/** The root qdisc rmq-bench adds (netem for latency, tbf for slow-link) that `tc qdisc show dev X` shows, or null. Pure. */
export function ourRootQdisc(tcShow: string): 'netem' | 'tbf' | null {
  const m = /qdisc (netem|tbf) \S+ root/.exec(tcShow);
  return m ? (m[1] as 'netem' | 'tbf') : null;
}

/**
 * Why network faults cannot run here, or null when they can: they need Linux, root, nsenter,
 * iptables and tc on the host, and a local engine whose container processes are visible (not
 * Docker Desktop's VM). One line, with what to do.
 */
export async function netFaultsUnavailable(
  docker: Docker,
  container: string,
  run: HostRunner,
  kind: string,
  /** The queueing discipline the fault adds (latency: netem, slow-link: tbf), probed on the node's loopback; null for none. */
  qdisc: 'netem' | 'tbf' | null,
  host: { platform: NodeJS.Platform; uid: number | undefined; netnsVisible: (pid: number) => Promise<boolean> } = {
    platform: process.platform,
    uid: process.getuid?.(),
    netnsVisible: (pid) =>
      access(`/proc/${pid}/ns/net`).then(
        () => true,
        () => false,
      ),
  },
): Promise<string | null> {
  const other = 'kill, stop, pause and disconnect still work';
  if (host.platform !== 'linux') return `'${kind}' needs Linux with a local Docker engine (nsenter into the node's network namespace); ${other}`;
  if (host.uid !== 0) return `'${kind}' needs root on the host (nsenter, iptables, tc): run as root or with sudo; ${other}`;
  for (const tool of ['nsenter', 'iptables', 'tc', 'ip']) {
    const r = await run('sh', ['-c', `command -v ${tool}`]).catch(() => ({ exitCode: 1, output: '' }));
    if (r.exitCode !== 0) return `'${kind}' needs '${tool}' on the host (Debian: apt-get install util-linux iptables iproute2); ${other}`;
  }
  const pid = await containerPid(docker, container);
  if (!(await host.netnsVisible(pid))) {
    return `'${kind}' needs the containers' processes on this host, and ${container}'s (pid ${pid}) is not visible here (Docker Desktop runs them in a VM); ${other}`;
  }
  // netem and tbf are kernel modules (sch_netem, sch_tbf) that some kernels lack: try it on the node's loopback, then take it away.
  if (qdisc !== null) {
    const probe = await run('nsenter', [
      '-t',
      String(pid),
      '-n',
      'tc',
      'qdisc',
      'add',
      'dev',
      'lo',
      'root',
      ...(qdisc === 'netem' ? ['netem', 'delay', '0ms'] : tbfArgs('1gbit')),
    ]);
    if (probe.exitCode !== 0) {
      return `'${kind}' needs the kernel's ${qdisc} queueing discipline, and this kernel has none (tc: ${probe.output.trim().split('\n').pop() ?? ''}): load it (modprobe sch_${qdisc}) or use a kernel built with CONFIG_NET_SCH_${qdisc.toUpperCase()}; the other faults still work`;
    }
    await run('nsenter', ['-t', String(pid), '-n', 'tc', 'qdisc', 'del', 'dev', 'lo', 'root']);
  }
  return null;
}

export async function containerPid(docker: Docker, container: string): Promise<number> {
  const info = await docker.getContainer(container).inspect();
  if (!info.State.Running || !info.State.Pid) throw new EnvironmentError(`${container} is not running (state: ${info.State.Status})`);
  return info.State.Pid;
}

/** The IPv4 addresses of the other containers on the networks this container is attached to. */
export async function peerAddresses(docker: Docker, container: string): Promise<{ name: string; ip: string }[]> {
  const info = await docker.getContainer(container).inspect();
  const peers: { name: string; ip: string }[] = [];
  for (const network of Object.keys(info.NetworkSettings.Networks ?? {})) {
    const net = await docker.getNetwork(network).inspect();
    for (const [id, c] of Object.entries((net.Containers ?? {}) as Record<string, { Name: string; IPv4Address: string }>)) {
      if (id === info.Id || !c.IPv4Address) continue;
      peers.push({ name: c.Name, ip: c.IPv4Address.split('/')[0]! });
    }
  }
  return peers;
}

export async function inNetns(run: HostRunner, pid: number, cmd: string[]): Promise<string> {
  const r = await run('nsenter', ['-t', String(pid), '-n', ...cmd]);
  if (r.exitCode !== 0) throw new EnvironmentError(`nsenter -t ${pid} -n ${cmd.join(' ')} exited ${r.exitCode}: ${r.output.trim().split('\n').pop() ?? ''}`);
  return r.output;
}

/** Cut the container off from its peers; returns the undo, which removes exactly those rules. */
export async function applyPartition(docker: Docker, container: string, run: HostRunner): Promise<() => Promise<void>> {
  const pid = await containerPid(docker, container);
  const peers = await peerAddresses(docker, container);
  if (peers.length === 0) throw new EnvironmentError(`${container} has no peers on its networks to be cut off from`);
  const added: string[][] = [];
  const undo = async (): Promise<void> => {
    // The container may have been restarted (a new pid, a fresh namespace without our rules).
    const now = await containerPid(docker, container).catch(() => undefined);
    if (now !== pid) return;
    const removed = [...added];
    for (const rule of added.reverse()) await inNetns(run, pid, ['iptables', '-w', '-D', ...rule]);
    await expectRulesGone(run, pid, container, removed);
  };
  try {
    for (const p of peers) {
      for (const rule of partitionRules(p.ip)) {
        await inNetns(run, pid, ['iptables', '-w', '-I', ...rule]);
        added.push(rule);
      }
    }
  } catch (err) {
    await undo().catch(() => undefined);
    throw err;
  }
  return undo;
}

/** Delay (and drop) everything the container sends; returns the undo, which removes the qdiscs. */
export function applyNetem(docker: Docker, container: string, run: HostRunner, spec: NetemArgs): Promise<() => Promise<void>> {
  return applyRootQdisc(docker, container, run, netemArgs(spec));
}

/** Limit the bandwidth of everything the container sends (tbf); returns the undo, which removes the qdiscs. */
export function applyTbf(docker: Docker, container: string, run: HostRunner, rate: string): Promise<() => Promise<void>> {
  return applyRootQdisc(docker, container, run, tbfArgs(rate));
}

/** A root qdisc on every interface of the container but lo; returns the undo, which removes them. */
async function applyRootQdisc(docker: Docker, container: string, run: HostRunner, qdisc: readonly string[]): Promise<() => Promise<void>> {
  const pid = await containerPid(docker, container);
  const links = linkNames(await inNetns(run, pid, ['ip', '-o', 'link', 'show']));
  if (links.length === 0) throw new EnvironmentError(`${container} has no network interface besides lo`);
  const added: string[] = [];
  const undo = async (): Promise<void> => {
    const now = await containerPid(docker, container).catch(() => undefined);
    if (now !== pid) return;
    for (const dev of added) await inNetns(run, pid, ['tc', 'qdisc', 'del', 'dev', dev, 'root']);
    // Checked: a qdisc of ours still on an interface it was added to (a defect of the undo) is
    // removed again, so the node is not left slowed, and the undo fails naming it.
    const left: string[] = [];
    for (const dev of added) {
      const ours = ourRootQdisc(await inNetns(run, pid, ['tc', 'qdisc', 'show', 'dev', dev]));
      if (ours === null) continue;
      await inNetns(run, pid, ['tc', 'qdisc', 'del', 'dev', dev, 'root']);
      left.push(`${ours} on ${dev}`);
    }
    if (left.length > 0) throw new EnvironmentError(`${container}: undoing the fault left ${left.join(', ')} (removed since)`);
  };
  try {
    for (const dev of links) {
      await inNetns(run, pid, ['tc', 'qdisc', 'add', 'dev', dev, 'root', ...qdisc]);
      added.push(dev);
    }
  } catch (err) {
    await undo().catch(() => undefined);
    throw err;
  }
  return undo;
}

/** What a killed run left in a running container: our iptables rules and netem or tbf qdiscs, removed. Returns what was removed. */
async function removeLeftovers(docker: Docker, container: string, run: HostRunner): Promise<string[]> {
  const pid = await containerPid(docker, container);
  const removed: string[] = [];
  for (const rule of ourRules(await inNetns(run, pid, ['iptables', '-w', '-S']))) {
    await inNetns(run, pid, ['iptables', '-w', '-D', ...rule]);
    removed.push(`iptables ${rule.join(' ')}`);
  }
  for (const dev of linkNames(await inNetns(run, pid, ['ip', '-o', 'link', 'show']))) {
    const ours = ourRootQdisc(await inNetns(run, pid, ['tc', 'qdisc', 'show', 'dev', dev]));
    if (ours === null) continue;
    await inNetns(run, pid, ['tc', 'qdisc', 'del', 'dev', dev, 'root']);
    removed.push(`${ours} on ${dev}`);
  }
  return removed;
}

/** Our leftovers in every running container; failures are logged, never thrown (cluster up goes on). */
export async function healNetFaults(docker: Docker, containers: readonly string[], log: (line: string) => void, info: (line: string) => void): Promise<void> {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return;
  const run = await hostRunner();
  const tools = await run('sh', ['-c', 'command -v nsenter && command -v iptables && command -v tc && command -v ip']).catch(() => ({
    exitCode: 1,
    output: '',
  }));
  if (tools.exitCode !== 0) return;
  for (const c of containers) {
    try {
      const removed = await removeLeftovers(docker, c, run);
      if (removed.length > 0) info(`${c} had network faults left behind: removed ${removed.join('; ')}`);
    } catch (err) {
      // A node not running, or not created yet (a first `cluster up` under a new name), has nothing left behind.
      if ((err as Error).message.includes('is not running') || (err as { statusCode?: number }).statusCode === 404) continue;
      log(`could not check ${c} for network faults left behind: ${errorMessage(err)}`);
    }
  }
}
