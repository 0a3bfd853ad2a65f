import { QueryFailedError } from 'typeorm';

const UNIQUE_VIOLATION = '23505';

/** The unique index (or constraint) a write violated, when that is why it failed. */
export function violatedIndex(error: unknown): string | undefined {
  if (!(error instanceof QueryFailedError)) return undefined;
  const driver = error.driverError as { code?: string; constraint?: string };
  return driver.code === UNIQUE_VIOLATION ? driver.constraint : undefined;
}
