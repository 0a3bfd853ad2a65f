import { Account } from './accounts/account.entity';
import { TWILIO_PROXY_ENTITIES } from './compat/twilio-proxy/entities';
import { ApiKey } from './accounts/api-key.entity';
import { WebhookSecret } from './accounts/webhook-secrets/webhook-secret.entity';
import { IdempotencyRecord } from './idempotency/idempotency-record.entity';
import { NOTIFICATION_ENTITIES } from './notifications/entities';
import { ProxyNumber } from './numbers/proxy-number.entity';
import { BreakerOverrideRecord } from './providers/breaker-override.entity';
import { BreakerTransitionRecord } from './providers/breaker-transition.entity';
import { ClusterLeaseRecord } from './providers/cluster/leader-lease.entity';
import { ProviderStateRecord } from './providers/provider-state.entity';
import { ProxyNumberLoad, ProxyNumberLoadChange } from './providers/proxy-number-load.entity';
import { Interaction } from './relay/interaction.entity';
import { SessionMove } from './rescue/session-move.entity';
import { SessionParticipant } from './sessions/session-participant.entity';
import { Session } from './sessions/session.entity';

/** Every entity of the broker; the data source and the migration drift check read this list. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export const ENTITIES: Function[] = [
  Account,
  ApiKey,
  ProxyNumber,
  Session,
  SessionParticipant,
  Interaction,
  SessionMove,
  IdempotencyRecord,
  BreakerTransitionRecord,
  BreakerOverrideRecord,
  ProviderStateRecord,
  ClusterLeaseRecord,
  ProxyNumberLoad,
  ProxyNumberLoadChange,
  ...NOTIFICATION_ENTITIES,
  WebhookSecret,
  ...TWILIO_PROXY_ENTITIES,
];
