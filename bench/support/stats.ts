/** Small statistics for benchmark output: every figure a bench prints goes through these. */

export function mean(xs: number[]): number {
  return xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0) / xs.length;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** Nearest-rank percentile (p in 0..100) of latencies in ms. */
export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = Float64Array.from(xs).sort();
  const rank = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return s[rank];
}

export function round(x: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

export function ratio(a: number, b: number): number {
  return Math.round((a / b) * 1000) / 1000;
}

/** `--name=value` from the command line, as a number. */
export function numberArg(name: string, fallback: number): number {
  const found = process.argv.find((a) => a.startsWith(`--${name}=`));
  if (found === undefined) return fallback;
  const value = Number(found.slice(name.length + 3));
  if (!Number.isFinite(value)) throw new Error(`--${name} must be a number`);
  return value;
}

export function nowMs(): number {
  return performance.now();
}
