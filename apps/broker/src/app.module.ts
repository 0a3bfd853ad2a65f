import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import type { DestinationStream } from 'pino';
import { AccountsModule } from './accounts';
import { ClockModule } from './common/clock';
import { TwilioProxyModule } from './compat/twilio-proxy/twilio-proxy.module';
import { RequestBodyGuard } from './common/http';
import { ProblemDetailsFilter, createValidationPipe } from './common/problem';
import { ConfigModule, type BrokerConfig } from './config';
import { DatabaseModule } from './database.module';
import { HealthModule } from './health/health.module';
import { LoggingModule } from './logging/logging.module';
import { NotificationsModule } from './notifications';
import { MetricsModule } from './metrics/metrics.module';
import { NumbersModule } from './numbers/numbers.module';
import { OpsModule } from './ops';
import { ProvidersModule } from './providers/providers.module';
import { RelayModule } from './relay/relay.module';
import { RescueModule } from './rescue/rescue.module';
import { RetentionModule } from './retention/retention.module';
import { SessionLookupModule } from './sessions/session-lookup.module';
import { SessionsModule } from './sessions/sessions.module';

@Module({})
export class AppModule {
  /** `databaseUrl` is the resolved one: DATABASE_URL or the embedded server's; `logDestination` replaces stdout (tests). */
  static forRoot(config: BrokerConfig, databaseUrl: string, logDestination?: DestinationStream): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        ClockModule,
        LoggingModule.forRoot(config, logDestination),
        DatabaseModule.forRoot(databaseUrl, { size: config.databasePoolSize, idleTimeoutMs: config.databasePoolIdleTimeoutMs }),
        ScheduleModule.forRoot(),
        MetricsModule,
        AccountsModule,
        ProvidersModule,
        NumbersModule,
        SessionsModule,
        SessionLookupModule,
        RelayModule,
        RescueModule,
        HealthModule,
        NotificationsModule,
        OpsModule,
        RetentionModule,
        TwilioProxyModule,
      ],
      providers: [
        { provide: APP_FILTER, useClass: ProblemDetailsFilter },
        { provide: APP_PIPE, useFactory: createValidationPipe },
        // Bodies are read once the caller is authenticated: by the authenticating guard, else by this one.
        { provide: APP_GUARD, useClass: RequestBodyGuard },
      ],
    };
  }
}
