/** The deadline of a wait for the cluster (cluster up, reset, the replication waits). */
export interface WaitOptions {
  timeoutMs: number;
}

/** The seconds since it was made, as the waits' progress lines show them: "12 s". */
export function stopwatch(): () => string {
  const started = performance.now();
  return () => `${Math.round((performance.now() - started) / 1000)} s`;
}
