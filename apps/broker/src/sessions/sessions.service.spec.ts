/**
 * SessionsService against its repository's interface (an in-memory one): what a create, a close and a
 * read decide, and which events they leave. The providers are scripted; the SQL is covered by the
 * end-to-end suites (test/sessions.e2e-spec.ts, test/product-events.e2e-spec.ts).
 */
import { ConsoleLogger, Logger } from '@nestjs/common';
import { pino } from 'pino';
import { ProviderCallFailure, type ProviderResult } from '@app/cpaas';
import { InMemorySessionRepository } from '../../../../test/support/in-memory-repositories';
import { ProblemException } from '../common/problem';
import { loadConfig } from '../config';
import { AppLogger } from '../logging/app-logger';
import type { DestinationCache } from '../destinations/destination-cache';
import type { DestinationPolicy } from '../destinations/destination-policy';
import { ParticipantNumbers } from '../destinations/participant-numbers';
import { BrokerMetrics } from '../metrics/broker-metrics';
import { CallbackUrlValidator } from '../notifications';
import type { ProviderRegistry } from '../providers/provider-registry';
import type { CreateSessionDto } from './dto/create-session.dto';
import type { ReservationRequest, SessionAllocator } from './session-allocator';
import { SessionsService } from './sessions.service';

const ACCOUNT = '00000000-0000-4000-8000-00000000000a';
const OTHER_ACCOUNT = '00000000-0000-4000-8000-00000000000b';
// The service reads the wall clock (expiry at close, the list's status), so the sessions are made around it.
const T0 = new Date();
const ok = <T>(value: T): ProviderResult<T> => ({ ok: true, value, latencyMs: 1 });
const down = (provider: string): ProviderResult<never> => ({
  ok: false,
  latencyMs: 1,
  failure: new ProviderCallFailure(provider, { countsAgainstProvider: true, cause: 'http-5xx' }, 'HTTP 503 on bind'),
});

/** Providers that keep sessions (they bind), answering bind and unbind as scripted, in routing order. */
class ScriptedProviders {
  readonly calls: string[] = [];
  readonly bind = new Map<string, ProviderResult<{ bindingId: string }>>();
  readonly unbind = new Map<string, ProviderResult<void>>();

  constructor(readonly names: string[]) {}

  registry(): ProviderRegistry {
    const provider = (name: string) => ({
      name,
      keepsSessions: true,
      bindProxy: () => Promise.resolve(this.bind.get(name) ?? ok({ bindingId: `b-${name}` })),
      unbindProxy: () => Promise.resolve(this.unbind.get(name) ?? ok(undefined)),
    });
    const registry = {
      *candidates() {
        for (const name of registry.names) yield { provider: provider(name), probe: false };
      },
      names: this.names,
      has: (name: string) => this.names.includes(name),
      call: (name: string, operation: string, _probe: boolean, run: (p: ReturnType<typeof provider>) => Promise<unknown>) => {
        this.calls.push(`${operation}:${name}`);
        return run(provider(name));
      },
    };
    return registry as unknown as ProviderRegistry;
  }
}

/**
 * The allocator's promise: a pending session on the provider, or removed again. `sweptWhileBinding`: the
 * sweeper drops each reservation right after it is made, as when a bind takes longer than a reservation lives.
 */
function allocator(sessions: InMemorySessionRepository, sweptWhileBinding = false): SessionAllocator {
  const fake: Pick<SessionAllocator, 'reserve' | 'release'> = {
    reserve: (request: ReservationRequest) => {
      const reservation = sessions.addPending({
        accountId: request.accountId,
        provider: request.provider,
        channels: request.channels,
        participants: [...request.participants],
        proxyNumber: `+2349010000001`,
        callbackUrl: request.callbackUrl,
        idempotencyKey: request.idempotencyKey,
        expiresAt: new Date(T0.getTime() + request.ttlSeconds * 1000),
      });
      if (sweptWhileBinding) sessions.sessions.delete(reservation.id);
      return Promise.resolve(reservation);
    },
    release: (id: string) => {
      if (sessions.sessions.get(id)?.status === 'pending') sessions.sessions.delete(id);
      return Promise.resolve();
    },
  };
  return fake as SessionAllocator;
}

const reservation = { accountId: ACCOUNT, provider: 'primary', channels: ['sms' as const], participants: ['+1', '+2'], proxyNumber: '+3' };

const body: CreateSessionDto = {
  channel: 'sms',
  participants: [{ number: '+2348030000001' }, { number: '+2348030000002' }],
  ttlSeconds: 600,
};

describe('SessionsService', () => {
  let now: Date;
  let sessions: InMemorySessionRepository;
  let providers: ScriptedProviders;
  let service: SessionsService;
  // The service's log lines, as the broker writes them (Nest's Logger through pino, JSON).
  const written: string[] = [];
  const logged = () => written.map((line) => JSON.parse(line) as Record<string, unknown>);
  beforeAll(() => Logger.overrideLogger(new AppLogger(pino({ level: 'warn' }, { write: (line: string) => void written.push(line) }))));
  afterAll(() => Logger.overrideLogger(new ConsoleLogger()));

  const build = (names: string[], sweptWhileBinding = false) => {
    providers = new ScriptedProviders(names);
    const config = loadConfig({});
    const destinations = { assertAllowed: () => Promise.resolve() } as unknown as DestinationPolicy;
    service = new SessionsService(
      sessions,
      config,
      providers.registry(),
      allocator(sessions, sweptWhileBinding),
      new BrokerMetrics(),
      new CallbackUrlValidator(config),
      destinations,
      // An account without a default country: participants are E.164, as the bodies here write them.
      new ParticipantNumbers({ view: () => Promise.resolve(null) } as unknown as DestinationCache),
    );
  };

  beforeEach(() => {
    written.length = 0;
    now = T0;
    sessions = new InMemorySessionRepository(() => now);
    build(['primary', 'secondary']);
  });

  describe('create', () => {
    it('activates the reservation on the first provider that binds, with its binding, and records session.created', async () => {
      const created = await service.create(ACCOUNT, body, 'key-1');

      expect(created).toMatchObject({ status: 'active', provider: 'primary', channel: 'sms' });
      expect(sessions.sessions.get(created.id)).toMatchObject({ status: 'active', bindingId: 'b-primary', idempotencyKey: 'key-1' });
      expect(sessions.events.map((e) => [e.type, e.sessionId])).toEqual([['session.created', created.id]]);
      expect(await service.createdWith(ACCOUNT, 'key-1')).toEqual(created);
    });

    it('fails over to the next provider when binding fails, leaving no reservation on the first', async () => {
      providers.bind.set('primary', down('primary'));

      const created = await service.create(ACCOUNT, body);

      expect(created.provider).toBe('secondary');
      expect(providers.calls).toEqual(['bind:primary', 'bind:secondary']);
      expect([...sessions.sessions.values()].map((s) => [s.provider, s.status])).toEqual([['secondary', 'active']]);
    });

    it('logs the failover as one warning naming the request, the account, the released reservation, the provider and the key', async () => {
      providers.bind.set('primary', down('primary'));
      const reserved: string[] = [];
      const reserve = sessions.addPending.bind(sessions);
      sessions.addPending = (row) => {
        const pending = reserve(row);
        reserved.push(pending.id);
        return pending;
      };

      const created = await service.create(ACCOUNT, body, 'key-1', 'req-failover-1');

      expect(reserved).toHaveLength(2);
      expect(reserved[1]).toBe(created.id);
      expect(logged()).toEqual([
        expect.objectContaining({
          level: 40,
          context: 'SessionsService',
          reqId: 'req-failover-1',
          accountId: ACCOUNT,
          sessionId: reserved[0],
          provider: 'primary',
          idempotencyKey: 'key-1',
          msg: 'binding on primary failed (primary: HTTP 503 on bind); trying the next provider',
        }),
      ]);
    });

    it('answers 503 naming each provider when every one fails, and keeps nothing', async () => {
      providers.bind.set('primary', down('primary'));
      providers.bind.set('secondary', down('secondary'));

      const failure = await service.create(ACCOUNT, body).catch((e: unknown) => e);

      expect(failure).toBeInstanceOf(ProblemException);
      expect((failure as ProblemException).getStatus()).toBe(503);
      expect((failure as ProblemException).slug).toBe('providers-failed');
      expect(sessions.sessions.size).toBe(0);
      expect(sessions.events).toEqual([]);
    });

    it('unbinds and answers 503 when the reservation was swept while the provider was binding', async () => {
      build(['primary'], true);

      const failure = await service.create(ACCOUNT, body).catch((e: unknown) => e);

      expect((failure as ProblemException).slug).toBe('reservation-expired');
      expect(providers.calls).toEqual(['bind:primary', 'unbind:primary']);
      expect(sessions.events).toEqual([]);
      expect(logged()).toEqual([
        expect.objectContaining({
          level: 40,
          provider: 'primary',
          sessionId: expect.any(String),
          msg: expect.stringMatching(/no longer pending/),
        }),
      ]);
    });
  });

  describe('takeOver (a retry whose first create died)', () => {
    it('drops the reservation the dead create left pending, and has no session to answer with', async () => {
      const left = sessions.addPending({ ...reservation, idempotencyKey: 'key-1' });
      const anotherKey = sessions.addPending({ ...reservation, idempotencyKey: 'key-2' });

      expect(await service.takeOver(ACCOUNT, 'key-1', 'req-retry-1')).toBeNull();

      expect(sessions.sessions.has(left.id)).toBe(false);
      expect(sessions.sessions.has(anotherKey.id)).toBe(true);
      expect(logged()).toEqual([
        expect.objectContaining({
          level: 40,
          reqId: 'req-retry-1',
          accountId: ACCOUNT,
          sessionId: left.id,
          provider: 'primary',
          idempotencyKey: 'key-1',
        }),
      ]);
    });

    it('answers with the session the dead create activated', async () => {
      const created = await service.create(ACCOUNT, body, 'key-1');

      expect(await service.takeOver(ACCOUNT, 'key-1')).toEqual(created);
      expect(sessions.sessions.get(created.id)!.status).toBe('active');
    });
  });

  describe('close', () => {
    it('closes an active session, frees its participants, records session.closed at the close, and unbinds', async () => {
      const created = await service.create(ACCOUNT, body);
      now = new Date(T0.getTime() + 60_000);

      const closed = await service.close(ACCOUNT, created.id);

      expect(closed.status).toBe('closed');
      const stored = sessions.sessions.get(created.id)!;
      expect(stored).toMatchObject({ status: 'closed' });
      expect(stored.releasedAt).not.toBeNull();
      expect(sessions.freed.has(created.id)).toBe(true);
      expect(sessions.events.map((e) => e.type)).toEqual(['session.created', 'session.closed']);
      expect(sessions.events[1].receivedAt).toEqual(stored.endedAt);
      expect(providers.calls).toEqual(['bind:primary', 'unbind:primary']);
    });

    it('changes nothing when closed again: no second event, no second unbind', async () => {
      const created = await service.create(ACCOUNT, body);
      await service.close(ACCOUNT, created.id);

      const again = await service.close(ACCOUNT, created.id);

      expect(again.status).toBe('closed');
      expect(sessions.events.map((e) => e.type)).toEqual(['session.created', 'session.closed']);
      expect(providers.calls.filter((c) => c.startsWith('unbind'))).toHaveLength(1);
    });

    it('marks a session past its expiresAt expired, not closed, and says so in the event', async () => {
      const created = await service.create(ACCOUNT, body);
      Object.assign(sessions.sessions.get(created.id)!, { expiresAt: new Date(Date.now() - 1), inactiveAt: new Date(Date.now() - 1) });

      const closed = await service.close(ACCOUNT, created.id);

      expect(closed.status).toBe('expired');
      expect(sessions.events.map((e) => e.type)).toEqual(['session.created', 'session.expired']);
    });

    it("is a 404 for another account's session and for a reservation, and leaves both as they were", async () => {
      const created = await service.create(ACCOUNT, body);
      const pending = sessions.addPending(reservation);

      for (const [account, id] of [
        [OTHER_ACCOUNT, created.id],
        [ACCOUNT, pending.id],
      ]) {
        const failure = await service.close(account, id).catch((e: unknown) => e);
        expect((failure as ProblemException).getStatus()).toBe(404);
      }
      expect(sessions.sessions.get(created.id)!.status).toBe('active');
      expect(sessions.sessions.get(pending.id)!.status).toBe('pending');
    });

    it('keeps the binding for the sweeper to retry when the provider cannot unbind now', async () => {
      const created = await service.create(ACCOUNT, body);
      providers.unbind.set('primary', down('primary'));

      await service.close(ACCOUNT, created.id);

      expect(sessions.sessions.get(created.id)!.releasedAt).toBeNull();
      expect(await sessions.unreleased(10)).toHaveLength(1);
    });
  });

  describe('reads', () => {
    it('lists newest first a page at a time, leaving reservations out', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        now = new Date(T0.getTime() + i * 1000);
        ids.push((await service.create(ACCOUNT, body)).id);
      }
      sessions.addPending(reservation);

      const first = await service.list(ACCOUNT, { limit: 2 });
      const second = await service.list(ACCOUNT, { limit: 2, cursor: first.nextCursor! });

      expect(first.sessions.map((s) => s.id)).toEqual([ids[2], ids[1]]);
      expect(second.sessions.map((s) => s.id)).toEqual([ids[0]]);
      expect(second.nextCursor).toBeNull();
      expect((await service.list(OTHER_ACCOUNT, {})).sessions).toEqual([]);
    });
  });
});
