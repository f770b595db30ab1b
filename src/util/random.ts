/** mulberry32: a small seeded PRNG (numbers in [0, 1)), so a seed replays the same choices (kill points, chaos schedules). Pure. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** floor(draw × n), kept within 0..n-1 (draw may be 1 - ε). Pure. */
export function pickIndex(draw: number, n: number): number {
  if (!(n >= 1)) throw new RangeError(`cannot pick among ${n} items`);
  return Math.min(n - 1, Math.max(0, Math.floor(draw * n)));
}
