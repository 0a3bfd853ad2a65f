export {
  CALL_ANSWERS,
  systemClock,
  type BindProxyRequest,
  type BridgeCallRequest,
  type CallAnswer,
  type Clock,
  type CpaasProvider,
  type FailureCause,
  type InboundEvent,
  type ProviderFailure,
  type ProviderOperation,
  type ProviderResult,
  type SendSmsRequest,
  type StatusEvent,
  type UnbindProxyRequest,
  type VoiceInstruction,
  type WebhookRequest,
} from './provider';
export { InvalidWebhookError, UnknownAdapterError, isInvalidWebhookError } from './errors';
export { isE164 } from './e164';
export { createProvider, type CpaasProviderConfig, type CpaasProviderOptions } from './create-provider';
export { SimProviderAdapter, type SimProviderAdapterOptions } from './sim/sim-provider.adapter';
export {
  SIM_SIGNATURE_HEADER,
  SIM_SIGNATURE_TOLERANCE_SEC,
  SIM_TIMESTAMP_HEADER,
  signSimWebhook,
  verifySimSignature,
  type SimSignatureCheck,
} from './sim/sim-signature';
export {
  SIM_COMPLETED_CALL_SEC,
  SIM_MAGIC_NUMBERS,
  SIM_VOICE_INSTRUCTION_CONTENT_TYPE,
  parseSimVoiceInstruction,
  simApiPath,
  simCalleeAnswer,
  type SimBindBody,
  type SimCallBody,
  type SimErrorCode,
  type SimInboundSmsWebhook,
  type SimInboundVoiceWebhook,
  type SimSmsBody,
  type SimStatusWebhook,
  type SimUnbindBody,
  type SimVoiceInstruction,
} from './sim/sim-protocol';
export { parseSimInbound, parseSimStatus } from './sim/sim-webhooks';
export { readLimited } from './read-limited';
