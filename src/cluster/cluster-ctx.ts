import type { Config } from '../config.js';
import type { Progress } from '../progress.js';
import type { ComposeClient } from './docker/compose.js';
import type { Docker } from './docker/engine.js';
import type { ManagementClient } from './broker/management.js';

/**
 * What the cluster functions take of a command's context: the configuration, the clients
 * (opened lazily), progress and Ctrl+C. Declared here so that cluster/ depends on nothing above
 * it; src/faults/applied.ts's FaultContext adds how faults reach a node, and src/context.ts's
 * Context what scenarios need besides (checkpoints).
 */
export interface ClusterContext {
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
