import { Module } from '@nestjs/common';
import { DestinationsModule } from '../../destinations/destinations.module';
import { InterceptModule } from '../../intercept';
import { NotificationsModule } from '../../notifications';
import { ProvidersModule } from '../../providers/providers.module';
import { RelayModule } from '../../relay/relay.module';
import { SessionsModule } from '../../sessions/sessions.module';
import { ProxyCallbackRepository } from './callbacks/proxy-callback.repository';
import { ProxyCallbacks } from './callbacks/proxy-callbacks';
import { TwilioBasicAuthGuard } from './http/twilio-basic-auth.guard';
import { ProxyInteractionRepository } from './interactions/proxy-interaction.repository';
import { ProxyInteractionsController, ProxyMessageInteractionsController } from './interactions/proxy-interactions.controller';
import { ProxyServiceNumberRepository } from './phone-numbers/proxy-service-number.repository';
import { ProxyServiceNumbers } from './phone-numbers/proxy-service-numbers';
import { ProxyServiceNumbersController } from './phone-numbers/proxy-service-numbers.controller';
import { ProxyServiceRepository } from './services/proxy-service.repository';
import { ProxyServices } from './services/proxy-services';
import { ProxyServicesController } from './services/proxy-services.controller';
import { ProxyReservationRepository } from './sessions/proxy-reservation.repository';
import { ProxySessionRepository } from './sessions/proxy-session.repository';
import { ProxySessions } from './sessions/proxy-sessions';
import { ProxyParticipantsController, ProxySessionsController } from './sessions/proxy-sessions.controller';

/**
 * The Twilio-Proxy-compatible API (docs/twilio-proxy-migration.md): Twilio Proxy's v1 routes under
 * `/compat/twilio-proxy/v1/…`, in Twilio's shapes, on the broker's own sessions, providers and failover.
 */
@Module({
  imports: [SessionsModule, ProvidersModule, DestinationsModule, RelayModule, NotificationsModule, InterceptModule],
  providers: [
    TwilioBasicAuthGuard,
    ProxyServiceRepository,
    ProxyServices,
    ProxyServiceNumberRepository,
    ProxyServiceNumbers,
    ProxyReservationRepository,
    ProxySessionRepository,
    ProxySessions,
    ProxyInteractionRepository,
    ProxyCallbackRepository,
    ProxyCallbacks,
  ],
  controllers: [
    ProxyServicesController,
    ProxyServiceNumbersController,
    ProxySessionsController,
    ProxyParticipantsController,
    ProxyInteractionsController,
    ProxyMessageInteractionsController,
  ],
})
export class TwilioProxyModule {}
