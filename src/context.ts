import type { Config } from './config.js';
import { createComposeClient, type ComposeClient } from './cluster/compose.js';
import { connectEngine, type Docker } from './cluster/engine.js';
import { ManagementClient } from './cluster/management.js';
import type { Progress } from './report/progress.js';

/** What a command hands to a scenario: configuration, the clients (opened lazily), progress and Ctrl+C. */
export interface Context {
  readonly config: Config;
  readonly progress: Progress;
  /** Aborted on Ctrl+C: every wait listens to it, and every fault is undone in a finally. */
  readonly signal: AbortSignal;
  readonly management: ManagementClient;
  docker(): Promise<Docker>;
  compose(): Promise<ComposeClient>;
  /** A line for people on stderr (warnings, cleanup failures). */
  log(line: string): void;
}

export function createContext(config: Config, progress: Progress, signal: AbortSignal, management?: ManagementClient): Context {
  let docker: Promise<Docker> | undefined;
  let compose: Promise<ComposeClient> | undefined;
  return {
    config,
    progress,
    signal,
    management: management ?? ManagementClient.fromConfig(config),
    docker: () => (docker ??= connectEngine()),
    compose: () => (compose ??= createComposeClient(config)),
    log: (line) => progress.warn(line),
  };
}
