/**
 * How fast the machine itself runs, moment by moment: a worker thread of the load generator does
 * the same fixed piece of arithmetic (about 0.5 ms when calibrated) every 20 ms and times each one.
 * Nothing of the broker or PostgreSQL is in it, so when a burst is slow and the probe is slow in
 * the same second, the machine was slow (CPU taken by others, a virtual CPU descheduled or clocked
 * down after an idle spell); when the burst is slow and the probe is not, the cause is in the stack.
 * The probe runs only while asked, so it does not keep an idle machine awake.
 */
import { Worker } from 'node:worker_threads';
import { median, percentile, round } from './stats';

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
function spin(n) { let x = 0; for (let i = 0; i < n; i++) x += Math.sqrt(i + 0.5); return x; }
for (let i = 0; i < 50; i++) spin(2000);
let n = workerData.n;
if (n === 0) {
  // Calibration: the size of a piece that takes about 0.5 ms here, measured once while the machine is busy.
  n = 20000;
  for (let round = 0; round < 8; round++) { const s = performance.now(); spin(n); n = Math.max(1000, Math.round(n * 0.5 / Math.max(0.01, performance.now() - s))); }
  parentPort.postMessage(n);
  return;
}
const samples = [];
let stopped = false;
parentPort.on('message', () => { stopped = true; parentPort.postMessage(samples); });
const t0 = performance.now();
let i = 0;
(function tick() {
  if (stopped) return;
  const s = performance.now();
  spin(n);
  samples.push([s - t0, performance.now() - s]);
  i += 1;
  setTimeout(tick, Math.max(0, t0 + i * workerData.everyMs - performance.now()));
})();
`;

export interface ProbeFigures {
  /** Median and p99 time of the fixed piece of work (ms) in the first second, and after it. */
  firstSecondMedianMs: number;
  firstSecondP99Ms: number;
  laterMedianMs: number;
  /** First second's median over the later median: ~1 when the machine ran at one speed throughout. */
  firstSecondVsLater: number;
}

/**
 * The size of the probe's piece of work: measured once, on a warm machine (right after a load
 * phase), so that every later probe does exactly the same work whatever the machine's speed then.
 */
export async function calibrateProbe(): Promise<number> {
  const worker = new Worker(`(() => {${WORKER}})()`, { eval: true, workerData: { n: 0, everyMs: 20 } });
  const n = await new Promise<number>((done, fail) => {
    worker.once('message', done);
    worker.once('error', fail);
  });
  await worker.terminate();
  return n;
}

/** Starts the probe with the calibrated size `n`; `stop` ends it and sums up what it timed. */
export function machineProbe(n: number, everyMs = 20): { stop(): Promise<ProbeFigures> } {
  const worker = new Worker(`(() => {${WORKER}})()`, { eval: true, workerData: { n, everyMs } });
  return {
    async stop() {
      const samples = await new Promise<Array<[number, number]>>((done, fail) => {
        worker.once('message', done);
        worker.once('error', fail);
        worker.postMessage('stop');
      });
      await worker.terminate();
      // The worker's own start (its calibration) is not part of the figure: time from its first sample.
      const first = samples.filter(([t]) => t < 1000).map(([, d]) => d);
      const later = samples.filter(([t]) => t >= 1000).map(([, d]) => d);
      const laterMedian = median(later);
      return {
        firstSecondMedianMs: round(median(first), 3),
        firstSecondP99Ms: round(percentile(first, 99), 3),
        laterMedianMs: round(laterMedian, 3),
        firstSecondVsLater: round(median(first) / laterMedian, 2),
      };
    },
  };
}
