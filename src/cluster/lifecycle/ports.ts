import net from 'node:net';
import { PortTakenError } from '../../errors.js';
import type { ClusterContext } from '../cluster-ctx.js';
import type { ContainerInfo } from '../docker/engine.js';

/** Resolves true when nothing listens on host:port. */
export function portIsFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/**
 * Throw PortTakenError for the first port the cluster needs that another process holds (the
 * ports of our own running or paused containers are fine): AMQP, management and stream per node,
 * and Prometheus on the first node.
 */
export async function checkPorts(ctx: ClusterContext, cs: ContainerInfo[]): Promise<void> {
  for (const node of ctx.config.nodes) {
    const c = cs.find((x) => x.name === node.container);
    if (c && (c.state === 'running' || c.state === 'paused')) continue;
    const ports: [number, string][] = [
      [node.amqpPort, `${node.name} AMQP`],
      [node.managementPort, `${node.name} management`],
      [node.streamPort, `${node.name} stream`],
    ];
    if (node.name === ctx.config.nodes[0]?.name) ports.push([ctx.config.prometheusPort, `${node.name} prometheus`]);
    for (const [port, purpose] of ports) {
      if (!(await portIsFree(port))) throw new PortTakenError(port, purpose);
    }
  }
}
