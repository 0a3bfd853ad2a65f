import { Global, Module } from '@nestjs/common';
import { AccountSessions } from '../notifications';
import { SessionRepository } from './session.repository';
import { SessionsModule } from './sessions.module';

/**
 * The sessions' answers to the features that sessions import (notifications' event history asks whether an account
 * has a session), from the sessions' own repository. Global, imported once by the app: those features cannot import
 * SessionsModule, which imports them.
 */
@Global()
@Module({
  imports: [SessionsModule],
  providers: [{ provide: AccountSessions, useExisting: SessionRepository }],
  exports: [AccountSessions],
})
export class SessionLookupModule {}
