import type { MigrationInterface, QueryRunner } from 'typeorm';
import { RESERVE_FUNCTION as JOINED_RESERVE_FUNCTION } from './1796191000000-CreateInOneStatement';

const JOIN = 'LEFT JOIN unnest(p_load_order) WITH ORDINALITY AS lo(number_id, load_rank) ON lo.number_id = pn.id';
const JOINED_RANK = 'lo.load_rank, pn.id IS NOT DISTINCT FROM sticky_id AS sticky';
const POSITION_RANK = 'array_position(p_load_order, pn.id) AS load_rank, pn.id IS NOT DISTINCT FROM sticky_id AS sticky';

/** broker_reserve_session as this migration writes it (the next one's `down`). */
export const POSITION_RESERVE_FUNCTION = replaced(replaced(JOINED_RESERVE_FUNCTION, JOIN, ''), JOINED_RANK, POSITION_RANK);

export function replaced(text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error(`migration: "${from}" is not in the function`);
  return text.replace(from, to);
}

/**
 * broker_reserve_session ranks each candidate number by its place in the load order with `array_position`, not by a
 * join to `unnest(p_load_order)`. The function's plans are generic (`force_generic_plan`), which estimate one or two
 * numbers for a provider, so the join was a nested loop that read the whole load order again for every number of the
 * pool: numbers × load order rows per create (auto_explain at 300 numbers: 300 loops of 300 rows, 20.7 ms of the
 * statement's 22). Measured on one connection, each reservation rolled back (300 a run, two runs): 14.1–14.6 ms per
 * reservation with a 300-number load order before, 3.3–4.1 ms now, 1.5 ms with an empty one; the same order (numbers
 * not in the load order first, then by their place, then by number), so the same number is taken.
 */
export class LoadRankByPosition1796202000000 implements MigrationInterface {
  name = 'LoadRankByPosition1796202000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(orReplace(POSITION_RESERVE_FUNCTION));
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(orReplace(JOINED_RESERVE_FUNCTION));
  }
}

export function orReplace(definition: string): string {
  return replaced(definition, 'CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION');
}
