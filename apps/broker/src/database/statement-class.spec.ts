import { RESERVE_SQL } from '../sessions/session-reservation.repository';
import { StatementClasses, statementClass } from './statement-class';

describe('statementClass', () => {
  it('takes the name a statement carries in a leading comment', () => {
    expect(statementClass(RESERVE_SQL)).toBe('session.reserve');
    expect(statementClass('  /* Outbox.Record */ INSERT INTO x VALUES (1)')).toBe('outbox.record');
  });

  it('names plain statements by verb and first table', () => {
    expect(statementClass('SELECT "ApiKey"."id" AS "ApiKey_id" FROM "api_keys" "ApiKey" WHERE x = $1')).toBe('select api_keys');
    expect(statementClass(`UPDATE sessions SET released_at = now() WHERE id = $1`)).toBe('update sessions');
    expect(statementClass('INSERT INTO "webhook_events"("id") VALUES ($1)')).toBe('insert webhook_events');
    expect(statementClass('DELETE FROM sessions WHERE id = $1')).toBe('delete sessions');
    expect(statementClass('SELECT 1')).toBe('select');
  });

  it('names a WITH statement by the table it writes, not a row lock or an upsert', () => {
    expect(statementClass('WITH a AS (SELECT id FROM t FOR UPDATE SKIP LOCKED) UPDATE jobs SET x = 1 FROM a')).toBe('with update jobs');
    expect(statementClass('WITH a AS (SELECT 1) INSERT INTO jobs (x) SELECT 1 ON CONFLICT (x) DO UPDATE SET x = 2')).toBe(
      'with insert jobs',
    );
    expect(statementClass('WITH a AS (SELECT id FROM t) SELECT * FROM a')).toBe('with select');
  });

  it('groups transaction control', () => {
    for (const sql of ['START TRANSACTION', 'COMMIT', 'ROLLBACK', 'BEGIN']) expect(statementClass(sql)).toBe('transaction');
  });
});

describe('StatementClasses', () => {
  it('keeps at most the given number of classes; the next new one is "other"', () => {
    const classes = new StatementClasses(2);
    expect(classes.of('SELECT 1 FROM a')).toBe('select a');
    expect(classes.of('SELECT 1 FROM b')).toBe('select b');
    expect(classes.of('SELECT 1 FROM c')).toBe('other');
    expect(classes.of('SELECT 2 FROM a')).toBe('select a');
  });
});
