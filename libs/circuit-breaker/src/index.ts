export { CircuitBreaker, type BreakerOptions } from './circuit-breaker';
export type { BreakerState, BreakerStatus, BreakerTransition } from './breaker-status';
export type { Admission, Outcome } from './outcome';
export {
  validatePolicy,
  windowBuckets,
  type BackoffRecovery,
  type BreakerPolicy,
  type CloseRule,
  type ConsecutiveFailuresRule,
  type CoolOffRecovery,
  type FailureRatioRule,
  type FirstSuccessClose,
  type HalfOpenAdmission,
  type HalfOpenFailure,
  type HealthChecksRecovery,
  type RecoveryRule,
  type ShareAdmission,
  type SingleTrialAdmission,
  type SuccessRateClose,
  type TripRule,
  type WindowErrorRateRule,
} from './policy';
export { TELEPHONY_DEFAULTS, telephonyPolicy, type TelephonySettings } from './presets';
export type { BreakerSnapshot, WindowSnapshot } from './snapshot';
export { BreakerRejectedError, BreakerTimeoutError } from './errors';
