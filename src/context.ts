import type { Config } from './config.js';
import type { FaultContext, FaultInjector } from './faults/applied.js';
import { dockerInjector } from './faults/injector.js';
import { createComposeClient, type ComposeClient } from './cluster/docker/compose.js';
import { connectEngine, type Docker } from './cluster/docker/engine.js';
import { ManagementClient } from './cluster/broker/management.js';
import type { Progress } from './progress.js';
import type { Checkpoint, CheckpointRunner } from './checkpoint.js';
import { type BrokerInfo, readBrokerInfo } from './cluster/broker/broker-info.js';

/**
 * What a command hands to a scenario: what the cluster functions take (configuration, the
 * clients opened lazily, progress, Ctrl+C, log lines: ClusterContext), how faults reach a node
 * (FaultContext), and checkpoints.
 */
export interface Context extends FaultContext {
  /** A checkpoint of the run: the user's --checkpoint-cmd runs here (its output on stderr); nothing without one. */
  checkpoint(point: Checkpoint): Promise<void>;
  /**
   * The broker's version, asked of the management API once it answers (remembered from then on);
   * null while no node answers. Every --json document names it; version-gated features check it.
   */
  broker(): Promise<BrokerInfo | null>;
}

export interface ContextOverrides {
  management?: ManagementClient;
  faults?: FaultInjector;
  checkpoint?: CheckpointRunner;
}

export function createContext(config: Config, progress: Progress, signal: AbortSignal, overrides: ContextOverrides = {}): Context {
  let docker: Promise<Docker> | undefined;
  let compose: Promise<ComposeClient> | undefined;
  const getDocker = (): Promise<Docker> => (docker ??= connectEngine());
  const management = overrides.management ?? ManagementClient.fromConfig(config);
  let broker: BrokerInfo | undefined;
  return {
    config,
    progress,
    signal,
    management,
    async broker() {
      if (broker) return broker;
      try {
        broker = await readBrokerInfo(management);
        return broker;
      } catch {
        return null;
      }
    },
    docker: getDocker,
    compose: () => (compose ??= createComposeClient(config)),
    faults: overrides.faults ?? dockerInjector(config, getDocker, management, progress),
    log: (line) => progress.warn(line),
    async checkpoint(point) {
      const run = overrides.checkpoint;
      if (!run) return;
      progress.update(`${point.name} ${point.queue}: running --checkpoint-cmd`);
      const output = await run(point, signal);
      for (const line of output.split('\n').filter((l) => l.trim() !== '')) progress.info(`checkpoint ${point.name}: ${line}`);
    },
  };
}
