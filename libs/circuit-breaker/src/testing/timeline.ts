/**
 * Test helper: writes a marble string from (time in ms, key) pairs, so a test can say "at 30 s, p" instead of
 * counting frames. Keys at the same time become a group. For TestScheduler.run, where 1 frame = 1 ms.
 */
export function timeline(events: ReadonlyArray<readonly [number, string]>): string {
  const byTime = new Map<number, string>();
  for (const [at, key] of events) byTime.set(at, (byTime.get(at) ?? '') + key);
  const parts: string[] = [];
  let cursor = 0;
  for (const at of [...byTime.keys()].sort((a, b) => a - b)) {
    if (at < cursor) throw new RangeError(`timeline: ${at} ms overlaps the previous group (next free frame ${cursor})`);
    const keys = byTime.get(at) as string;
    if (at > cursor) parts.push(`${at - cursor}ms`);
    parts.push(keys.length === 1 ? keys : `(${keys})`);
    cursor = at + (keys.length === 1 ? 1 : keys.length + 2);
  }
  return parts.join(' ');
}

/** `count` copies of `key`, `everyMs` apart, starting at `fromMs`. */
export function every(everyMs: number, count: number, key: string, fromMs: number): Array<[number, string]> {
  return Array.from({ length: count }, (_, i): [number, string] => [fromMs + i * everyMs, key]);
}

/** Consecutive keys one frame apart, starting at `fromMs`: burst(0, 'fffff'). */
export function burst(fromMs: number, keys: string): Array<[number, string]> {
  return [...keys].map((key, i): [number, string] => [fromMs + i, key]);
}
