import { type FaultSpec, onOneNode } from './spec.js';

/** disconnect: the node's container cut off its networks; the heal reconnects it with its aliases and addresses. */
export const disconnect: FaultSpec<'disconnect'> = {
  kind: 'disconnect',
  needs: {},
  leader: 'elected-away',
  nodeDown: true,
  leftovers: ['disconnected container'],
  color: '#0891b2',
  async onContainer({ docker, container }) {
    const info = await docker.getContainer(container).inspect();
    const attachments = Object.entries(info.NetworkSettings.Networks ?? {}).map(([network, ep]) => ({
      network,
      aliases: (ep.Aliases ?? []).filter((a: string) => a !== info.Id.slice(0, 12)),
      ipv4: ep.IPAMConfig?.IPv4Address || undefined,
    }));
    for (const a of attachments) await docker.getNetwork(a.network).disconnect({ Container: info.Id, Force: true });
    return {
      undo: async () => {
        for (const a of attachments) {
          await docker.getNetwork(a.network).connect({
            Container: info.Id,
            EndpointConfig: { Aliases: Array.from(new Set([...a.aliases, container])), ...(a.ipv4 ? { IPAMConfig: { IPv4Address: a.ipv4 } } : {}) },
          });
        }
      },
    };
  },
  apply: onOneNode('disconnect'),
};
