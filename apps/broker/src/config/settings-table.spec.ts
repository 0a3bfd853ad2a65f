/**
 * Every BREAKER_*, WEBHOOK_* and provider variable, one row each: the values it accepts (at its
 * boundaries) start the broker and give policies the breaker library accepts; the values it refuses stop
 * the start with one line naming the variable, never the library's field names. A new variable of these
 * families fails the first test until it has a row here.
 */
import { CircuitBreaker } from '@app/circuit-breaker';
import { endpointPolicies } from '../notifications/delivery/endpoint-health';
import { workerSettings } from '../notifications/notification-settings';
import { providerBreakerPolicy } from '../providers/provider-breakers';
import { ConfigError, configVariables, loadConfig } from './load-config';

interface Row {
  variable: string;
  /** Values that start the broker (with `with` set too). */
  accepts: string[];
  /** Values that stop the start. */
  refuses: string[];
  /** Other variables the values need (a bound another variable sets). */
  with?: Record<string, string>;
}

const ROWS: Row[] = [
  { variable: 'BREAKER_CONSECUTIVE_FAILURES', accepts: ['1', '1000'], refuses: ['0', '1001', '2.5', 'x'] },
  { variable: 'BREAKER_WINDOW_MS', accepts: ['120', '240', '86400000'], refuses: ['0', '10', '119', '121', '1000', '86400120', '12.5'] },
  { variable: 'BREAKER_WINDOW_ERROR_RATE', accepts: ['0', '0.5', '0.999'], refuses: ['-0.1', '1', '1.5', 'x'] },
  { variable: 'BREAKER_WINDOW_MIN_CALLS', accepts: ['1', '1000000'], refuses: ['0', '1000001', '1.5'] },
  { variable: 'BREAKER_HEALTH_INTERVAL_MS', accepts: ['10', '86400000'], refuses: ['9', '86400001', 'x'] },
  { variable: 'BREAKER_CLOSED_CHECK_INTERVAL_MS', accepts: ['0', '10', '86400000'], refuses: ['1', '9', '-1', '86400001', '2.5', 'x'] },
  { variable: 'BREAKER_HALF_OPEN_AFTER_PASSES', accepts: ['1', '1000'], refuses: ['0', '1001'] },
  { variable: 'BREAKER_HALF_OPEN_PROBE_SHARE', accepts: ['0.001', '1'], refuses: ['0', '1.01', 'x'] },
  { variable: 'BREAKER_CLOSE_SUCCESS_RATE', accepts: ['0', '0.999'], refuses: ['-1', '1', '2'] },
  { variable: 'BREAKER_CLOSE_AFTER_MS', accepts: ['0', '86400000'], refuses: ['-1', '86400001'] },
  { variable: 'BREAKER_CLOSE_MIN_PROBES', accepts: ['1', '1000000'], refuses: ['0', '1000001'] },
  { variable: 'BREAKER_SLOW_CALL_MS', accepts: ['1', '600000'], refuses: ['0', '600001'] },
  {
    variable: 'BREAKER_LEADER_LEASE_MS',
    accepts: ['0', '30', '30000'],
    refuses: ['-1', '29', '30001', '86400001', 'x'],
    with: { BREAKER_HEALTH_INTERVAL_MS: '30000' },
  },
  { variable: 'BREAKER_OUTCOME_BATCH_MS', accepts: ['1', '1000'], refuses: ['0', '1001', '2.5'] },
  { variable: 'WEBHOOK_ALLOW_PRIVATE_TARGETS', accepts: ['true', 'false'], refuses: ['yes', '1'] },
  { variable: 'WEBHOOK_RETRY_BASE_MS', accepts: ['1', '300000'], refuses: ['0', '300001', '3600001'] },
  { variable: 'WEBHOOK_RETRY_MAX_MS', accepts: ['5000', '86400000'], refuses: ['4999', '0', '86400001'] },
  { variable: 'WEBHOOK_GIVE_UP_AFTER_MS', accepts: ['1000', '2592000000'], refuses: ['999', '2592000001'] },
  { variable: 'WEBHOOK_CONNECT_TIMEOUT_MS', accepts: ['10', '600000'], refuses: ['9', '600001'] },
  { variable: 'WEBHOOK_ATTEMPT_TIMEOUT_MS', accepts: ['10', '29999'], refuses: ['9', '30000'] },
  { variable: 'WEBHOOK_DOWN_AFTER_FAILURES', accepts: ['1', '1000'], refuses: ['0', '1001'] },
  { variable: 'WEBHOOK_DOWN_RETRY_INTERVAL_MS', accepts: ['10', '86400000'], refuses: ['9', '86400001'] },
  { variable: 'WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT', accepts: ['1', '1000'], refuses: ['0', '1001'] },
  { variable: 'WEBHOOK_BREAKER_FAILURES', accepts: ['1', '1000'], refuses: ['0', '1001'] },
  { variable: 'WEBHOOK_BREAKER_RESET_MS', accepts: ['10', '600000'], refuses: ['9', '600001'] },
  { variable: 'WEBHOOK_BREAKER_MAX_RESET_MS', accepts: ['60000', '86400000'], refuses: ['59999', '86400001'] },
  { variable: 'WEBHOOK_POLL_INTERVAL_MS', accepts: ['10', '3600000'], refuses: ['9', '3600001'] },
  { variable: 'WEBHOOK_LEASE_MS', accepts: ['15001', '3600000'], refuses: ['15000', '99', '3600001'] },
  {
    variable: 'WEBHOOK_LEASE_MS',
    with: { WEBHOOK_ATTEMPT_TIMEOUT_MS: '99' },
    accepts: ['100'],
    refuses: ['99'],
  },
  { variable: 'WEBHOOK_SECRET_OVERLAP_MS', accepts: ['0', '2592000000'], refuses: ['-1', '2592000001'] },
  { variable: 'PROVIDER_CALL_TIMEOUT_MS', accepts: ['1', '600000'], refuses: ['0', '600001'] },
  { variable: 'WEBHOOK_MIN_PORT', accepts: ['1', '1024', '65535'], refuses: ['0', '65536', '1.5', 'x'] },
  {
    variable: 'PROVIDERS',
    // A sim provider needs its webhook secret (no built-in one).
    with: { SIM_WEBHOOK_SECRET: 'settings-table-secret' },
    accepts: ['a=sim:http://x', 'main=sim:http://sim:4010/,backup=sim:https://b.example'],
    refuses: ['primary', 'A=sim:http://x', 'a=sim:ftp://x', 'a=nope:http://x', 'a=sim:http://x,a=sim:http://y'],
  },
];

const FAMILY = /^(BREAKER_|WEBHOOK_|PROVIDER)/;

/** What the broker builds from a config: the provider breaker and each endpoint's two breakers. */
function buildBreakers(env: Record<string, string>): void {
  const config = loadConfig(env);
  new CircuitBreaker(providerBreakerPolicy(config.breaker)).dispose();
  const endpoint = endpointPolicies(workerSettings(config.notifications));
  new CircuitBreaker(endpoint.down).dispose();
  new CircuitBreaker(endpoint.url).dispose();
}

describe('every BREAKER_*, WEBHOOK_* and provider variable is checked where it is read', () => {
  it('has a row for each variable of these families', () => {
    const covered = new Set(ROWS.map((row) => row.variable));
    expect(configVariables().filter((name) => FAMILY.test(name) && !covered.has(name))).toEqual([]);
  });

  const accepted = ROWS.flatMap((row) => row.accepts.map((value) => [row.variable, value, row.with ?? {}] as const));
  it.each(accepted)('%s=%s starts, and the breaker library accepts what is built from it', (variable, value, extra) => {
    expect(() => buildBreakers({ ...extra, [variable]: value })).not.toThrow();
  });

  const refused = ROWS.flatMap((row) => row.refuses.map((value) => [row.variable, value, row.with ?? {}] as const));
  it.each(refused)('%s=%s stops the start with one line naming the variable', (variable, value, extra) => {
    let error: unknown;
    try {
      buildBreakers({ ...extra, [variable]: value });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toMatch(/^invalid configuration: /);
    // A bound set by another variable names both (WEBHOOK_RETRY_MAX_MS must be at least WEBHOOK_RETRY_BASE_MS).
    expect(message).toContain(variable);
    expect(message).not.toContain('\n');
    // The library's own words (trip[1].errorRate, recovery.maxMs, …) never reach the operator.
    expect(message).not.toMatch(/trip\[|recovery\.|halfOpen\.|close\.|breaker policy/);
  });
});
