/** A simulated provider's fault switch (docs/design.md#simulator) and how one request fares under it. */
export const FAULT_MODES = ['ok', 'down', 'error', 'timeout', 'reject', 'flaky'] as const;
export type FaultMode = (typeof FAULT_MODES)[number];

export interface FaultSettings {
  mode: FaultMode;
  /** Share of calls that fail in `flaky` mode, 0..1. */
  errorRate: number;
  /** Delay before every answer. */
  latencyMs: number;
}

export const DEFAULT_FAULTS: Readonly<FaultSettings> = { mode: 'ok', errorRate: 0, latencyMs: 0 };

/** What happens to one request: answered normally, or one of the failures. */
export type FaultOutcome = 'ok' | 'down' | 'error' | 'timeout' | 'reject';

/** `flaky` fails like `error` (503), for `errorRate` of the calls. */
export function decideFault(settings: FaultSettings, random: () => number): FaultOutcome {
  if (settings.mode === 'flaky') return random() < settings.errorRate ? 'error' : 'ok';
  return settings.mode;
}
