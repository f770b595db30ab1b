/**
 * Samples of a run whose length is not known in advance, at an interval chosen by the run: it
 * starts fine (a run of a few hundred messages lasts a fraction of a second) and doubles each
 * time the samples would pass `max`, keeping every other one, so a run of a million messages
 * keeps at most `max` evenly spaced samples. Pure: the caller reads the clock.
 */
export class AdaptiveSamples<S extends { tMs: number }> {
  readonly samples: S[] = [];
  #intervalMs: number;

  constructor(
    readonly max = 1_000,
    initialIntervalMs = 10,
  ) {
    if (max < 2) throw new RangeError('max must be at least 2');
    this.#intervalMs = initialIntervalMs;
  }

  get intervalMs(): number {
    return this.#intervalMs;
  }

  /** Records make() when an interval has passed since the last sample (always the first). */
  offer(tMs: number, make: () => S): void {
    const last = this.samples[this.samples.length - 1];
    if (last !== undefined && tMs - last.tMs < this.#intervalMs) return;
    this.push(make());
  }

  /** Records s whatever the interval (the end of a run). */
  push(s: S): void {
    this.samples.push(s);
    if (this.samples.length <= this.max) return;
    // Every other one, the first kept: spaced by twice the interval from here on.
    let w = 0;
    for (let r = 0; r < this.samples.length; r += 2) this.samples[w++] = this.samples[r]!;
    const newest = this.samples[this.samples.length - 1]!;
    this.samples.length = w;
    if (this.samples[w - 1] !== newest) this.samples.push(newest);
    this.#intervalMs *= 2;
  }
}
