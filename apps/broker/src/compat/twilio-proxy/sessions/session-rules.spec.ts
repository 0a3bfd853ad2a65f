import type { ProxySession } from './proxy-session.entity';
import type { CarryingSession, ProxySessionView } from './proxy-session.repository';
import { firstDeadline, idleTtlOf, modeChannels, sessionState } from './session-rules';

const created = new Date('2030-01-01T00:00:00Z');
const sevenDays = new Date(created.getTime() + 7 * 86_400_000);
const session = (fields: Partial<ProxySession> = {}): ProxySession =>
  ({
    id: 's',
    serviceId: 'v',
    accountId: 'a',
    uniqueName: null,
    mode: 'voice-and-message',
    ttl: 0,
    dateExpiry: null,
    expiresAt: sevenDays,
    closedAt: null,
    closedReason: null,
    deletedAt: null,
    createdAt: created,
    updatedAt: created,
    ...fields,
  }) as ProxySession;
const carrier = (fields: Partial<CarryingSession>): CarryingSession => ({
  status: 'active',
  provider: 'primary',
  channels: ['voice', 'sms'],
  proxyNumberId: 'n',
  proxyNumber: '+2349010000001',
  participants: ['+2348030000001', '+2348030000002'],
  lastInteractionAt: null,
  inactiveAt: sevenDays,
  expiresAt: sevenDays,
  expiredReason: null,
  endedAt: null,
  ...fields,
});
const view = (s: ProxySession, c: CarryingSession | null = null): ProxySessionView => ({ session: s, carrier: c });
const plus = (ms: number) => new Date(created.getTime() + ms);

describe('a Proxy Session’s rules', () => {
  it('maps mode to channels', () => {
    expect(modeChannels('voice-and-message')).toEqual(['voice', 'sms']);
    expect(modeChannels('message-only')).toEqual(['sms']);
    expect(modeChannels('voice-only')).toEqual(['voice']);
  });

  it('uses ttl as the idle TTL unless a date_expiry overrides it (Proxy’s rule), and 0 as none', () => {
    expect(idleTtlOf(session({ ttl: 300 }))).toBe(300);
    expect(idleTtlOf(session({ ttl: 0 }))).toBeNull();
    expect(idleTtlOf(session({ ttl: 300, dateExpiry: plus(3_600_000) }))).toBeNull();
  });

  it('is open 1 ms before its ttl without an interaction and closed (ttl) at it', () => {
    const s = session({ ttl: 300 });
    expect(firstDeadline(s)).toEqual(plus(300_000));
    expect(sessionState(view(s), plus(299_999)).status).toBe('open');
    expect(sessionState(view(s), plus(300_000))).toEqual({ status: 'closed', closedReason: 'ttl', endedAt: plus(300_000) });
  });

  it('closes at its date_expiry, or the broker’s 7 days when it named none', () => {
    const dated = session({ dateExpiry: plus(60_000), expiresAt: plus(60_000) });
    expect(sessionState(view(dated), plus(59_999)).status).toBe('open');
    expect(sessionState(view(dated), plus(60_000)).closedReason).toBe('date_expiry');
    expect(sessionState(view(session()), sevenDays).closedReason).toBe('max-duration');
  });

  it('follows its carrier: in-progress from its first interaction, closed when it ends or passes its deadline', () => {
    const s = session({ ttl: 300 });
    expect(sessionState(view(s, carrier({ inactiveAt: plus(600_000) })), plus(1)).status).toBe('open');
    expect(sessionState(view(s, carrier({ lastInteractionAt: plus(300_000), inactiveAt: plus(600_000) })), plus(599_999)).status).toBe(
      'in-progress',
    );
    expect(sessionState(view(s, carrier({ lastInteractionAt: plus(300_000), inactiveAt: plus(600_000) })), plus(600_000))).toMatchObject({
      status: 'closed',
      closedReason: 'ttl',
    });
    expect(sessionState(view(s, carrier({ status: 'closed', endedAt: plus(5) })), plus(10))).toEqual({
      status: 'closed',
      closedReason: null,
      endedAt: plus(5),
    });
    expect(
      sessionState(view(session({ closedAt: plus(7), closedReason: 'participant-removed' }), carrier({})), plus(10)).closedReason,
    ).toBe('participant-removed');
  });

  it('holds while its first participant waits, until the hold’s deadline', () => {
    const s = session({ ttl: 300 });
    const hold = carrier({ status: 'pending', participants: ['+2348030000001'], inactiveAt: plus(300_000) });
    expect(sessionState(view(s, hold), plus(299_999)).status).toBe('open');
    expect(sessionState(view(s, hold), plus(300_000)).status).toBe('closed');
  });
});
