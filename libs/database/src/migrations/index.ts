/** Every migration, oldest first. `npm run migration:generate -- <Name>` adds to this list. */
import { TwilioProxyCompat1796170000000 } from './1796170000000-TwilioProxyCompat';
import { ParticipantLimitSlots1796086246751 } from './1796086246751-ParticipantLimitSlots';
import { DedicatedNumbers1796082780206 } from './1796082780206-DedicatedNumbers';
import { AbuseLimits1796075770535 } from './1796075770535-AbuseLimits';
import { ClusterLease1796080000000 } from './1796080000000-ClusterLease';
import { CrashSafeIdempotency1796076857806 } from './1796076857806-CrashSafeIdempotency';
import { InteractionEvents1796023173236 } from './1796023173236-InteractionEvents';
import { WebhookDelivery1796022731916 } from './1796022731916-WebhookDelivery';
import { InitialSchema1796021822493 } from './1796021822493-InitialSchema';
import { DestinationNotify1796090000000 } from './1796090000000-DestinationNotify';
import { ParticipantSlotBackfill1796093000000 } from './1796093000000-ParticipantSlotBackfill';
import { ActivateSessionFunction1796097000000 } from './1796097000000-ActivateSessionFunction';
import { ReserveSessionFunction1796096000000 } from './1796096000000-ReserveSessionFunction';
import { ActivateSessionWakeAfterCommit1796101000000 } from './1796101000000-ActivateSessionWakeAfterCommit';
import { ReserveFirstFreeNumber1796100000000 } from './1796100000000-ReserveFirstFreeNumber';
import { AccountDefaultCountry1796140000000 } from './1796140000000-AccountDefaultCountry';
import { ConversationSessions1796120000000 } from './1796120000000-ConversationSessions';
import { WebhookSecretAtCreation1796073688584 } from './1796073688584-WebhookSecretAtCreation';
import { ProviderLastCheck1796110000000 } from './1796110000000-ProviderLastCheck';
import { GivenUpDeliveriesIndex1796160000000 } from './1796160000000-GivenUpDeliveriesIndex';
import { InteractionTextRetention1796161000000 } from './1796161000000-InteractionTextRetention';
import { WebhookEndpointPerAccount1796130000000 } from './1796130000000-WebhookEndpointPerAccount';
import { EnvironmentKeys1796130100000 } from './1796130100000-EnvironmentKeys';
import { SessionRescue1796180000000 } from './1796180000000-SessionRescue';
import { NumberQuarantine1796190000000 } from './1796190000000-NumberQuarantine';
import { CreateInOneStatement1796191000000 } from './1796191000000-CreateInOneStatement';
import { PoolUsageCounts1796192000000 } from './1796192000000-PoolUsageCounts';
import { BreakerOverrides1796200000000 } from './1796200000000-BreakerOverrides';
import { WebhookEventTextRetention1796201000000 } from './1796201000000-WebhookEventTextRetention';
import { LoadRankByPosition1796202000000 } from './1796202000000-LoadRankByPosition';
import { PickInLoadOrder1796203000000 } from './1796203000000-PickInLoadOrder';
import { NoJitInCreateFunctions1796204000000 } from './1796204000000-NoJitInCreateFunctions';
import { CreateWithoutNestedCall1796205000000 } from './1796205000000-CreateWithoutNestedCall';
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export const MIGRATIONS: Function[] = [
  InitialSchema1796021822493,
  WebhookDelivery1796022731916,
  InteractionEvents1796023173236,
  WebhookSecretAtCreation1796073688584,
  AbuseLimits1796075770535,
  CrashSafeIdempotency1796076857806,
  ClusterLease1796080000000,
  DedicatedNumbers1796082780206,
  ParticipantLimitSlots1796086246751,
  DestinationNotify1796090000000,
  ParticipantSlotBackfill1796093000000,
  ReserveSessionFunction1796096000000,
  ActivateSessionFunction1796097000000,
  ReserveFirstFreeNumber1796100000000,
  ActivateSessionWakeAfterCommit1796101000000,
  ProviderLastCheck1796110000000,
  ConversationSessions1796120000000,
  WebhookEndpointPerAccount1796130000000,
  EnvironmentKeys1796130100000,
  AccountDefaultCountry1796140000000,
  GivenUpDeliveriesIndex1796160000000,
  InteractionTextRetention1796161000000,
  TwilioProxyCompat1796170000000,
  SessionRescue1796180000000,
  NumberQuarantine1796190000000,
  CreateInOneStatement1796191000000,
  PoolUsageCounts1796192000000,
  BreakerOverrides1796200000000,
  WebhookEventTextRetention1796201000000,
  LoadRankByPosition1796202000000,
  PickInLoadOrder1796203000000,
  NoJitInCreateFunctions1796204000000,
  CreateWithoutNestedCall1796205000000,
];
