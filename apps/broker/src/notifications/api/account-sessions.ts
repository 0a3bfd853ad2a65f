/**
 * What the event history asks of the sessions (`GET /v1/events?session=`): whether the account has a session with
 * this id. Declared here and provided by the sessions (SessionLookupModule), which import notifications: the
 * sessions' SQL stays in their repository without notifications importing them back.
 */
export abstract class AccountSessions {
  /** Whether the account has a session with this id, in any status. */
  abstract exists(accountId: string, sessionId: string): Promise<boolean>;
}
