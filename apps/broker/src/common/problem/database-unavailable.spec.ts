import { QueryFailedError, QueryRunnerAlreadyReleasedError, QueryRunnerProviderAlreadyReleasedError } from 'typeorm';
import { isDatabaseUnavailable } from './database-unavailable';

/** A node-postgres error as the driver raises it: a message, and a SQLSTATE or a syscall code. */
const pgError = (message: string, code?: string) => Object.assign(new Error(message), code ? { code } : {});
const wrapped = (driverError: Error) => new QueryFailedError('INSERT INTO sessions ...', [], driverError);

describe('isDatabaseUnavailable', () => {
  it.each([
    ['the server shutting down or crashed', '57P01'],
    ['the server crashed under another backend', '57P02'],
    ['the server starting up or in recovery mode', '57P03'],
    ['too many connections', '53300'],
    ['a database closed to connections', '55000'],
    ['a connection failure class', '08006'],
    ['a write on a standby or a read-only server', '25006'],
    ['a refused connection', 'ECONNREFUSED'],
    ['a reset connection', 'ECONNRESET'],
  ])('is true for %s (%s), bare or wrapped by TypeORM', (_, code) => {
    expect(isDatabaseUnavailable(pgError('x', code))).toBe(true);
    expect(isDatabaseUnavailable(wrapped(pgError('x', code)))).toBe(true);
  });

  it.each([
    'Connection terminated unexpectedly',
    'Connection terminated due to connection timeout',
    'timeout exceeded when trying to connect',
    'Client has encountered a connection error and is not queryable',
    'Client was closed and is not queryable',
  ])('is true for the driver message "%s"', (message) => {
    expect(isDatabaseUnavailable(wrapped(pgError(message)))).toBe(true);
  });

  it('is true for a statement on a query runner (or its EntityManager) TypeORM released when its connection failed', () => {
    expect(isDatabaseUnavailable(new QueryRunnerAlreadyReleasedError())).toBe(true);
    expect(isDatabaseUnavailable(new QueryRunnerProviderAlreadyReleasedError())).toBe(true);
  });

  it.each([
    ['a unique violation', '23505'],
    ['a syntax error', '42601'],
    ['a serialization failure', '40001'],
    ['an undefined table', '42P01'],
  ])('is false for %s (%s): a bug or a conflict, not an outage', (_, code) => {
    expect(isDatabaseUnavailable(wrapped(pgError('x', code)))).toBe(false);
  });

  it('is false for an error that says nothing of the database', () => {
    expect(isDatabaseUnavailable(new Error('Cannot read properties of undefined'))).toBe(false);
    expect(isDatabaseUnavailable(undefined)).toBe(false);
  });
});
