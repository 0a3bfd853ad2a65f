import { ProblemException } from '../problem';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** What Date#toISOString writes for years 0000-9999; anything else never came from us. */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Where a page of a list ordered by (created at, id) descending ended. */
export interface PageCursor {
  at: Date;
  id: string;
}

export function encodePageCursor(at: Date, id: string): string {
  return Buffer.from(JSON.stringify([at.toISOString(), id])).toString('base64url');
}

/**
 * Reads a cursor back, fully: a tampered one (a date PostgreSQL refuses such as 2030-02-30, an
 * instant outside years 0-9999, an id that is not a UUID) is a 400 naming `cursor`, never a query.
 */
export function decodePageCursor(cursor: string): PageCursor {
  const { at, id } = decodeParts(cursor, ISO_INSTANT);
  return { at: new Date(at), id };
}

/**
 * Where a page of a list ordered by a timestamp PostgreSQL wrote itself ended: the instant as PostgreSQL
 * holds it, to the microsecond (`2030-01-31T23:59:59.999123Z`). A JavaScript Date keeps milliseconds only, and
 * a cursor rounded down to them would give the page's last row again on the next page.
 */
export interface PrecisePageCursor {
  at: string;
  id: string;
}

/** The SQL that writes a timestamptz column as a PrecisePageCursor's `at`. */
export const preciseInstantSql = (column: string): string => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

export function encodePrecisePageCursor(at: string, id: string): string {
  return Buffer.from(JSON.stringify([at, id])).toString('base64url');
}

export function decodePrecisePageCursor(cursor: string): PrecisePageCursor {
  return decodeParts(cursor, PRECISE_INSTANT);
}

const PRECISE_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

function decodeParts(cursor: string, instant: RegExp): { at: string; id: string } {
  try {
    const decoded: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Array.isArray(decoded) || decoded.length !== 2) throw new Error('not a pair');
    const [at, id] = decoded as unknown[];
    if (typeof at !== 'string' || typeof id !== 'string' || !instant.test(at) || !UUID.test(id)) throw new Error('bad parts');
    // Round-trips (to the millisecond) only for a real calendar date: 2030-02-30 becomes March 2nd.
    const millis = `${at.slice(0, 23)}Z`;
    const date = new Date(millis);
    if (Number.isNaN(date.getTime()) || date.toISOString() !== millis) throw new Error('not a real instant');
    return { at, id };
  } catch {
    throw new ProblemException({
      status: 400,
      slug: 'validation-error',
      title: 'Invalid request',
      detail: 'cursor: must be a nextCursor returned by this route',
      extensions: {
        errors: [{ field: 'cursor', message: 'must be a nextCursor returned by this route' }],
      },
    });
  }
}
