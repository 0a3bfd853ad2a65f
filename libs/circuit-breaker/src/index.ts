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
export {
  CALLBACK_URL_DEFAULTS,
  ENDPOINT_DOWN_DEFAULTS,
  PROVIDER_FAILOVER_DEFAULTS,
  TELEPHONY_DEFAULTS,
  callbackUrlPolicy,
  endpointDownPolicy,
  providerFailoverPolicy,
  telephonyPolicy,
  type CallbackUrlSettings,
  type EndpointDownSettings,
  type ProviderFailoverSettings,
  type TelephonySettings,
} from './presets';
export type { BreakerSnapshot, WindowSnapshot } from './snapshot';
export { BreakerRejectedError, BreakerTimeoutError, isBreakerRejectedError, isBreakerTimeoutError } from './errors';
