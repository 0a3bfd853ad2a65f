/**
 * What a benchmark has started and not stopped yet (PostgreSQL servers, child processes, an app), so that a
 * run that fails, wherever it fails, stops all of it instead of leaving a server behind. Each start
 * registers its stop with `started`; the stop it gets back runs once, whoever calls it first (the
 * benchmark's own `finally`, or `runBench` after a failure, newest first).
 */
type Stop = () => Promise<void>;

const running: Stop[] = [];

export function started(stop: Stop): Stop {
  let stopping: Promise<void> | undefined;
  const once: Stop = () => {
    const at = running.indexOf(once);
    if (at >= 0) running.splice(at, 1);
    return (stopping ??= stop());
  };
  running.push(once);
  return once;
}

/** Stops everything still registered, newest first; a stop that fails is reported and the rest still run. */
export async function stopStarted(): Promise<void> {
  while (running.length > 0) {
    await running[running.length - 1]().catch((error: unknown) => console.error('while stopping after a failure:', error));
  }
}

/** Runs a benchmark's `main`: on a failure it prints the error, stops what was started and exits 1. */
export function runBench(main: () => Promise<void>): void {
  void main().then(stopStarted, async (error: unknown) => {
    console.error(error);
    await stopStarted();
    process.exit(1);
  });
}
