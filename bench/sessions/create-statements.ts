/**
 * The statements the session benchmarks send from thin clients (no broker process): the minimal allocation, and the
 * broker's own create statement on a provider that keeps no sessions, run by the broker's repository. Shared by
 * run.ts (its SQL phases and floors) and postgres-ab.ts (PostgreSQL's CPU per create, A/B of the create's functions).
 */
import { randomUUID } from 'node:crypto';
import type { Client } from 'pg';
import { systemClock } from '@app/clock';
import { EventOutbox } from '../../apps/broker/src/notifications';
import { SessionReservationRepository, sessionCreated, type Session } from '../../apps/broker/src/sessions';
import { DIRECT_PROVIDER } from './direct-provider';
import { reservationInput } from '../support/reserve-params';

/**
 * Each participant number is used once in the whole run, so no create ever meets the pool rule. Valid
 * Nigerian mobiles (+234 803…), the pool's country: the broker refuses participants in a country the
 * account may not reach and special-rate numbers (docs/security.md).
 */
let participantSeq = 0;
export function freshPair(): [string, string] {
  participantSeq += 1;
  const n = participantSeq * 2;
  return [`+234803${String(n).padStart(7, '0')}`, `+234803${String(n + 1).padStart(7, '0')}`];
}

/** Claim + session + participants in one round trip: the least SQL that allocates and keeps the rule. */
export const ALLOCATE = `
  WITH pick AS (
    SELECT pn.id, pn.number FROM proxy_numbers pn
     WHERE pn.provider = $2 AND pn.enabled AND $3 = ANY(pn.capabilities)
       AND NOT EXISTS (SELECT 1 FROM session_participants sp
                        WHERE sp.proxy_number_id = pn.id AND sp.active AND sp.number = ANY($4::text[]))
     LIMIT 1
  ), s AS (
    INSERT INTO sessions (account_id, channels, status, provider, proxy_number_id, proxy_number, participants, expires_at, inactive_at)
    SELECT $1, ARRAY[$3], 'active', $2, pick.id, pick.number, $4::text[], now() + interval '1 hour', now() + interval '1 hour' FROM pick
    RETURNING id, proxy_number_id, expires_at
  )
  INSERT INTO session_participants (session_id, number, proxy_number_id, active, expires_at, partner)
  SELECT s.id, p.n, s.proxy_number_id, true, s.expires_at, p.o
    FROM s, (VALUES (($4::text[])[1], ($4::text[])[2]), (($4::text[])[2], ($4::text[])[1])) AS p(n, o)`;

/** The outbox the thin clients write events with, as the broker configures it. */
export const outbox = new EventOutbox(systemClock, { giveUpAfterMs: 72 * 3600_000 });

/** The direct provider's numbers as the broker's load order names them (all idle: by number), read once per run. */
let directLoadOrder: string[] | undefined;

/** One repository per client, made on its first create: the floor's thin client does no set-up per create. */
const repositories = new WeakMap<Client, SessionReservationRepository>();

/**
 * The one statement the broker sends for a create on a provider that keeps no sessions (SessionReservationRepository's
 * `create`: reservation, active session, its `session.created` event, one commit), run by the broker's own repository
 * on a bare client: the thin client of `brokerCpuVsFloor`'s floor on the no-provider-call path.
 */
export async function brokerCreateStatement(client: Client, accountId: string): Promise<void> {
  directLoadOrder ??= (
    await client.query<{ id: string }>(`SELECT id FROM proxy_numbers WHERE provider = $1 ORDER BY number`, [DIRECT_PROVIDER])
  ).rows.map((r) => r.id);
  let repository = repositories.get(client);
  if (!repository) {
    repository = new SessionReservationRepository(
      { query: async (sql: string, params?: unknown[]) => (await client.query(sql, params)).rows },
      outbox,
    );
    repositories.set(client, repository);
  }
  const participants = freshPair();
  const now = new Date();
  const sessionId = randomUUID();
  // As the broker sends it: the provider's numbers, least loaded first.
  const input = reservationInput({ provider: DIRECT_PROVIDER, accountId, participants, loadOrder: directLoadOrder, now, sessionId });
  const expiresAt = new Date(now.getTime() + 3600_000);
  const draft = {
    id: sessionId,
    accountId,
    channels: ['sms'],
    status: 'active',
    provider: DIRECT_PROVIDER,
    proxyNumber: '',
    participants,
    bindingId: null,
    callbackUrl: null,
    metadata: {},
    createdAt: now,
    expiresAt,
    inactiveAt: expiresAt,
  } as unknown as Session;
  const result = await repository.create(input, sessionCreated(draft));
  if (!result.reserved) throw new Error('the one-statement create reserved nothing');
}

/** The minimal allocation on `provider`'s numbers (the simulator's `primary` unless given). */
export async function minimalAllocation(client: Client, accountId: string, provider = 'primary'): Promise<void> {
  const result = await client.query(ALLOCATE, [accountId, provider, 'sms', freshPair()]);
  if (result.rowCount !== 2) throw new Error(`allocation made ${result.rowCount} participant rows`);
}
