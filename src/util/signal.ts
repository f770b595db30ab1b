/** Wakes everything waiting on it at each state change (a confirm, a drain, a lost connection); each wait also ends after its own timeout. */
export class Signal {
  private waiters: (() => void)[] = [];

  notify(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  wait(timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(resolve, timeoutMs);
      this.waiters.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }
}
