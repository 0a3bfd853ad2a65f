export {
  CALL_ANSWERS,
  WEBHOOK_ROUTES,
  providerWebhookUrls,
  webhookRoutePath,
  type BindProxyRequest,
  type BridgeCallRequest,
  type CallAnswer,
  type CpaasProvider,
  type FailureCause,
  type InboundEvent,
  type MessageOutcome,
  type NumberManagement,
  type NumberWebhooks,
  type ProviderNumber,
  type SmsOutcome,
  type ProviderFailure,
  type ProviderOperation,
  type ProviderResult,
  type SendSmsRequest,
  type StatusEvent,
  type UnbindProxyRequest,
  type WebhookAnswer,
  type WebhookRequest,
  type WebhookRoute,
  type WebhookVerification,
} from './provider';
export { InvalidWebhookError, ProviderCallFailure, UnknownAdapterError, isInvalidWebhookError, type FailureClass } from './errors';
export { isE164 } from './e164';
export { Secret } from './secret';
export {
  ADAPTERS,
  ADAPTER_CREDENTIALS,
  VENDOR_ADAPTERS,
  credential,
  optionalCredential,
  credentialVariable,
  readCredentials,
  type AdapterName,
  type CredentialSpec,
  type ProviderCredentials,
} from './credentials';
export { createProvider, type CpaasProviderConfig, type CpaasProviderOptions } from './create-provider';
export { SimProviderAdapter, type SimProviderAdapterOptions } from './sim/sim-provider.adapter';
export {
  SIM_SIGNATURE_HEADER,
  SIM_SIGNATURE_TOLERANCE_SEC,
  SIM_TIMESTAMP_HEADER,
  signSimWebhook,
  verifySimSignature,
  type SimSignatureCheck,
  type SimWebhookTarget,
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
  type SimOperation,
  type SimInboundSmsWebhook,
  type SimInboundVoiceWebhook,
  type SimSmsBody,
  type SimStatusWebhook,
  type SimUnbindBody,
  type SimVoiceInstruction,
} from './sim/sim-protocol';
export { parseSimInbound, parseSimStatus } from './sim/sim-webhooks';
export { readLimited } from './read-limited';
export { TWILIO_API_BASE, TwilioProviderAdapter, type TwilioProviderAdapterOptions } from './twilio/twilio-provider.adapter';
export { TWILIO_OTHER_OUTCOMES, TWILIO_OUTCOMES, twilioOutcome, type TwilioOutcomeRule } from './twilio/twilio-outcomes';
export { TWILIO_SIGNATURE_HEADER } from './twilio/twilio-webhooks';
export {
  VonageProviderAdapter,
  VONAGE_BRIDGED_CALL_PARAM,
  VONAGE_BRIDGED_CALL_TAG_PARAM,
  type VonageProviderAdapterOptions,
} from './vonage/vonage-provider.adapter';
export {
  VONAGE_SIGNATURE_TOLERANCE_SEC,
  verifyVonageWebhook,
  vonagePayloadHash,
  type VonageSignatureCheck,
} from './vonage/vonage-signature';
export { VONAGE_PROBLEM_RULES, VONAGE_STATUS_RULES, classifyVonageAnswer, type VonageOutcomeRule } from './vonage/vonage-outcomes';
export { connectNcco, talkNcco, type NccoAction } from './vonage/vonage-ncco';
export {
  AFRICASTALKING_API_BASE,
  AfricasTalkingProviderAdapter,
  type AfricasTalkingProviderAdapterOptions,
} from './africastalking/africastalking-provider.adapter';
export {
  AFRICASTALKING_ACCEPTED_CODES,
  AFRICASTALKING_HANGUP_CAUSES,
  AFRICASTALKING_HTTP_RULES,
  AFRICASTALKING_RECIPIENT_RULES,
  type AfricasTalkingRule,
} from './africastalking/africastalking-outcomes';
export { INFOBIP_API_BASE, InfobipProviderAdapter, type InfobipProviderAdapterOptions } from './infobip/infobip-provider.adapter';
export { INFOBIP_DIALOG_ENDINGS, INFOBIP_HTTP_RULES, INFOBIP_REJECTED_RULES, type InfobipRule } from './infobip/infobip-outcomes';
export { WEBHOOK_TOKEN_PARAM, tokenWebhooks, verifyWebhookToken, withWebhookToken } from './webhook-token';
