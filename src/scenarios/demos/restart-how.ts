/** How durability-demo restarts the nodes: stop (a clean shutdown) or kill (a crash). No imports: the CLI declares --how with it. */
export const RESTART_HOW = ['stop', 'kill'] as const;
export type RestartHow = (typeof RESTART_HOW)[number];
