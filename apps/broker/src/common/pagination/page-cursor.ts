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
  try {
    const decoded: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Array.isArray(decoded) || decoded.length !== 2) throw new Error('not a pair');
    const [at, id] = decoded as unknown[];
    if (typeof at !== 'string' || typeof id !== 'string' || !ISO_INSTANT.test(at) || !UUID.test(id)) throw new Error('bad parts');
    const date = new Date(at);
    // Round-trips only for a real calendar date: 2030-02-30 becomes March 2nd.
    if (Number.isNaN(date.getTime()) || date.toISOString() !== at) throw new Error('not a real instant');
    return { at: date, id };
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
