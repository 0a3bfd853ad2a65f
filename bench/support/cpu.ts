/**
 * CPU time per process, from Linux /proc (100 ticks a second): what each process of a run spent,
 * which on shared cores says where the time goes better than any latency. 0 where /proc is missing.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** CPU ms used so far by `pid`; with its exited (reaped) children when asked. */
export function processCpuMs(pid: number, withReapedChildren = false): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ').map(Number);
    return (f[11] + f[12] + (withReapedChildren ? f[13] + f[14] : 0)) * 10;
  } catch {
    return 0;
  }
}

/** The parent of `pid` (for a PostgreSQL backend: the postmaster). */
export function parentPid(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
}

/** A PostgreSQL server's CPU ms: the postmaster, its live backends and workers, and the exited ones. */
export function postgresCpuMs(postmaster: number): number {
  let children: number[] = [];
  try {
    children = execFileSync('pgrep', ['-P', String(postmaster)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    // no pgrep: only the postmaster and exited backends are counted
  }
  return processCpuMs(postmaster, true) + children.reduce((sum, pid) => sum + processCpuMs(pid), 0);
}

/** The whole machine's busy CPU ms so far, all cores (user, nice, system, irq, softirq of /proc/stat's first line); 0 without /proc. */
export function machineBusyMs(): number {
  try {
    const [user, nice, system, , , irq, softirq] = readFileSync('/proc/stat', 'utf8').split('\n')[0].split(/\s+/).slice(1).map(Number);
    return (user + nice + system + irq + softirq) * 10;
  } catch {
    return 0;
  }
}

/** This process's CPU ms so far. */
export function ownCpuMs(): number {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
}

/** Reads every named process's CPU now; `since` gives each one's ms since then, divided by `per`. */
export function cpuMeter(read: Record<string, () => number>) {
  const start = Object.fromEntries(Object.entries(read).map(([name, f]) => [name, f()]));
  return (per: number) =>
    Object.fromEntries(Object.entries(read).map(([name, f]) => [name, Math.round(((f() - start[name]) / per) * 1000) / 1000]));
}
