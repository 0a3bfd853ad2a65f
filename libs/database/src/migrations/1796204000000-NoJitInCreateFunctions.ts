import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The create's other functions that turn a plan type off (`enable_seqscan = off`); broker_reserve_session has its own. */
const FUNCTIONS = ['broker_activate_session', 'broker_activate_session_wake_after', 'broker_create_session'];

/**
 * `jit = off` for every function that turns a plan type off, as PickInLoadOrder does for broker_reserve_session.
 * PostgreSQL before 18 prices a plan node it was told to avoid, and could not, at 1e10 more: past `jit_above_cost`
 * (100 000), so a statement of a millisecond is compiled with LLVM on every execution, about 1.5 s on Debian's
 * PostgreSQL 15 (measured in PickInLoadOrder). These three did not cross it in test/postgres-jit.e2e-spec.ts (their
 * plans avoid every disabled node today; broker_create_session's JIT there came from the reservation it runs), so
 * this is the rule kept, not a measured fix: a later edit that leaves one node no other way would compile every
 * create. None of their statements reads enough rows for JIT to pay.
 */
export class NoJitInCreateFunctions1796204000000 implements MigrationInterface {
  name = 'NoJitInCreateFunctions1796204000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    for (const name of FUNCTIONS) await queryRunner.query(`ALTER FUNCTION ${name} SET jit = off`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    for (const name of FUNCTIONS) await queryRunner.query(`ALTER FUNCTION ${name} RESET jit`);
  }
}
