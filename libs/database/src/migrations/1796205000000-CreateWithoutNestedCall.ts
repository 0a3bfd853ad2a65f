import type { MigrationInterface, QueryRunner } from 'typeorm';
import { CREATE_FUNCTION as NESTED_CREATE_FUNCTION } from './1796191000000-CreateInOneStatement';
import { orReplace, replaced } from './1796202000000-LoadRankByPosition';
import { PICK_IN_LOAD_ORDER_FUNCTION } from './1796203000000-PickInLoadOrder';

/** broker_reserve_session's name and its last two parameters, which the create does not take (it writes `active`). */
const RESERVE_HEAD = 'CREATE FUNCTION "broker_reserve_session"(';
const RESERVE_LAST_PARAMETERS = 'p_quarantine_seconds integer, p_session_id uuid, p_status text)';
const RESERVE_LAST_COLUMN = 'over_limit_held integer, quarantined integer)';
const STATUS_WRITTEN = 'p_status, p_provider, c.id';
const DECLARATIONS = ' DECLARE\n';
/** Where the reservation, having reserved, answers its row. */
const RESERVED_ANSWER = '     inactive_at := reserved.inactive_at;\n     RETURN NEXT;\n';

/** The event and its delivery in CreateInOneStatement's function, which read the reservation's row as `r`. */
const EVENT_FROM = '     target := COALESCE(';
const EVENT_TO = '     delivery_url := target;\n';
const NESTED_ROW_NUMBER = 'to_jsonb(r.proxy_number)';

/** CreateInOneStatement's event and delivery, as written there, reading the number from the row just reserved. */
function eventAndDelivery(): string {
  const from = NESTED_CREATE_FUNCTION.indexOf(EVENT_FROM);
  const to = NESTED_CREATE_FUNCTION.indexOf(EVENT_TO, from);
  if (from < 0 || to < 0) throw new Error("migration: the event is not in CreateInOneStatement's function");
  const block = NESTED_CREATE_FUNCTION.slice(from, to + EVENT_TO.length);
  if (block.split(NESTED_ROW_NUMBER).length !== 3) throw new Error('migration: the event does not set the proxy number twice');
  return block.replaceAll(NESTED_ROW_NUMBER, 'to_jsonb(reserved.proxy_number)');
}

/**
 * broker_create_session as one PL/pgSQL function: broker_reserve_session's body (PickInLoadOrder's, with its settings),
 * writing the session `active`, followed where it reserved by the event and its delivery. Its signature, answer and
 * writes are CreateInOneStatement's.
 */
export const CREATE_IN_ONE_FUNCTION = orReplace(
  replaced(
    replaced(
      replaced(
        replaced(
          replaced(
            replaced(PICK_IN_LOAD_ORDER_FUNCTION, RESERVE_HEAD, 'CREATE FUNCTION "broker_create_session"('),
            RESERVE_LAST_PARAMETERS,
            `p_quarantine_seconds integer, p_session_id uuid,
   p_event_id uuid, p_event_account_id uuid, p_event_session_id uuid, p_type text, p_event_callback_url text, p_data jsonb,
   p_created_at timestamptz, p_delivery_id uuid, p_delivery_expires_at timestamptz, p_kind text)`,
          ),
          RESERVE_LAST_COLUMN,
          'over_limit_held integer, quarantined integer, delivery_url text)',
        ),
        STATUS_WRITTEN,
        "'active', p_provider, c.id",
      ),
      DECLARATIONS,
      `${DECLARATIONS}   target text;\n`,
    ),
    RESERVED_ANSWER,
    `     inactive_at := reserved.inactive_at;\n${eventAndDelivery()}     RETURN NEXT;\n`,
  ),
);

/**
 * A create on a provider that keeps no sessions runs one PL/pgSQL function, not one calling another (issue #34).
 * CreateInOneStatement's broker_create_session called broker_reserve_session and copied its row: per create PostgreSQL
 * set up a second function call (its fmgr cache and SET clauses, looked up again on each execution of the calling
 * statement), materialised the reservation's answer in a tuplestore, and ran a statement and nine assignments to read it
 * back. pg_stat_statements on a single connection: the nested call took 0.92 ms of the create's 1.13 ms, its own
 * statements 0.71 (wall time inside the executor; the call's set-up is part of the difference, not all of it).
 *
 * Now broker_create_session holds the reservation's statements itself (PickInLoadOrder's text, so the same pick, pool
 * rule, participant-limit slots and quarantine) with its settings (`enable_nestloop = off` and `jit = off` included), and
 * writes the event and its delivery where the reservation answered. PostgreSQL's CPU per create against the nested
 * version, alternated on one server (`npm run bench:sessions -- --postgres-ab --variant=<the nested functions>`, rounds
 * of 2 000 creates): 0.86 (6 rounds, 16 connections), 0.97 and 0.99 (6 and 10 rounds, 16 connections, load 2.7-4.6),
 * 0.93 (8 rounds, one connection); each run's pairs spread about ±10 %. About 5 %, then. broker_reserve_session itself
 * is unchanged (the simulator's path, with a bind, still reserves `pending` first).
 */
export class CreateWithoutNestedCall1796205000000 implements MigrationInterface {
  name = 'CreateWithoutNestedCall1796205000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(CREATE_IN_ONE_FUNCTION);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(orReplace(NESTED_CREATE_FUNCTION));
    // As NoJitInCreateFunctions left it.
    await queryRunner.query('ALTER FUNCTION broker_create_session SET jit = off');
  }
}
