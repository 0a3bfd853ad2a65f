import type { MigrationInterface, QueryRunner } from 'typeorm';
import { RESERVE_FUNCTION as JOINED_RESERVE_FUNCTION } from './1796191000000-CreateInOneStatement';
import { orReplace, POSITION_RESERVE_FUNCTION, replaced } from './1796202000000-LoadRankByPosition';

const SETTINGS = ' SET enable_seqscan = off\n';
/** The candidates, sorted: all of them before, now only as many as the participants' live rows could rule out, and one. */
const ALL_CANDIDATES = '        OFFSET 0) o\n';
const PICK_WINDOW = `        LIMIT (SELECT count(*) + 1 FROM session_participants b
                WHERE b.number = ANY(p_numbers) AND b.active AND b.expires_at > p_now)) o
`;
const POOL_RULE = 'sp.expires_at > p_now AND sp.number = ANY(p_numbers))\n      ORDER BY o.sticky';
const POOL_RULE_IN_ORDER = 'sp.expires_at > p_now AND sp.number = ANY(p_numbers) OFFSET 0)\n      ORDER BY o.sticky';

export const PICK_IN_LOAD_ORDER_FUNCTION = replaced(
  replaced(
    replaced(JOINED_RESERVE_FUNCTION, SETTINGS, `${SETTINGS} SET enable_nestloop = off\n SET jit = off\n`),
    ALL_CANDIDATES,
    PICK_WINDOW,
  ),
  POOL_RULE,
  POOL_RULE_IN_ORDER,
);

/**
 * broker_reserve_session's pick costs what the pool's size asks once, not its square. LoadRankByPosition ranked each
 * of the provider's numbers by `array_position` in the load order (the provider's numbers, least loaded first): a
 * scan of the load order per number, numbers² / 2 comparisons. Measured with pgbench (16 clients, fresh participants,
 * the create's statement with the provider's load order): PostgreSQL CPU per create 1.06–1.09 ms at 100 numbers and
 * 11.8–12.0 ms at 1 000 (163–166 creates/s).
 *
 * Now, in the same order (so the same number is taken):
 * - the rank comes from a hash join to `unnest(p_load_order)` (the function's plans are generic and estimate a
 *   number or two for a provider, which made that join a nested loop reading the load order per number, hence
 *   `enable_nestloop = off` for the function). The statement that writes the participants joins without a join clause,
 *   so it stays a nested loop, which PostgreSQL before 18 prices with 1e10 added per node that could not be avoided:
 *   past `jit_above_cost`, so every execution was compiled with LLVM (`jit = off` for the function). On Debian's
 *   PostgreSQL 15 that was 1.5 s per create (auto_explain: JIT took 1 523 ms of a 1 597 ms call; 2.8 creates/s
 *   against 103–107 with `jit = off`, 4 clients, 10 numbers); PostgreSQL 18 counts disabled nodes apart from the cost;
 * - the pool rule (no live session of these participants on the number) stays a check per candidate in order,
 *   stopping at the first that passes (`OFFSET 0` keeps it from becoming a join, which would check every number);
 * - only the first candidates are sorted: a number fails the pool rule only where one of these participants has a live
 *   row, so the first (their live rows + 1) in order hold the first that passes, if any does (a bounded top-N sort
 *   instead of sorting the whole pool).
 *
 * Same pgbench: 0.94–0.95 ms at 100 numbers, 2.18–2.23 ms at 1 000 (823–860 creates/s).
 */
export class PickInLoadOrder1796203000000 implements MigrationInterface {
  name = 'PickInLoadOrder1796203000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(orReplace(PICK_IN_LOAD_ORDER_FUNCTION));
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(orReplace(POSITION_RESERVE_FUNCTION));
  }
}
