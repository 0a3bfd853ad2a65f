/**
 * Twilio's paging: `PageSize` (1–1000, default 50), `Page` (an index the client keeps) and `PageToken` (where
 * the previous page ended: here the broker's keyset cursor), answered with `meta` (`page`, `page_size`,
 * `first_page_url`, `previous_page_url`, `url`, `next_page_url`, `key`). The `twilio` package follows
 * `next_page_url` as it is; a page that is not full is the last (`next_page_url: null`). Paging runs
 * forwards: `previous_page_url` is null, as on Twilio's first page.
 */
import { decodePageCursor, encodePageCursor, type PageCursor } from '../../../common/pagination/page-cursor';
import { invalidParameter } from './twilio-error';
import { TwilioParams } from './twilio-params';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;

export interface PageRequest {
  readonly size: number;
  readonly page: number;
  /** Only rows after this one (newest first, or the list's own order). */
  readonly after?: PageCursor;
}

interface PageMeta {
  page: number;
  page_size: number;
  first_page_url: string;
  previous_page_url: string | null;
  url: string;
  next_page_url: string | null;
  key: string;
}

export function pageRequest(query: unknown): PageRequest {
  const params = TwilioParams.of(query);
  const size = params.integer('PageSize', { min: 1, max: MAX_PAGE_SIZE }) ?? DEFAULT_PAGE_SIZE;
  const page = params.integer('Page', { min: 0, max: 1_000_000_000 }) ?? 0;
  const token = params.string('PageToken', { max: 200 });
  if (token === undefined) return { size, page };
  try {
    return { size, page, after: decodePageCursor(token) };
  } catch {
    throw invalidParameter('PageToken', 'PageToken must be one a next_page_url of this list carried.');
  }
}

/**
 * The answer for a page: `rows` is what the list read for it, one more than `request.size` when another page
 * follows; `at` names where a row sits in the list's order, so the next page starts after the last one shown.
 */
export function pageAnswer<Row, Item>(
  key: string,
  listUrl: string,
  request: PageRequest,
  rows: readonly Row[],
  at: (row: Row) => PageCursor,
  item: (row: Row) => Item,
): Record<string, unknown> & { meta: PageMeta } {
  const shown = rows.slice(0, request.size);
  const more = rows.length > request.size;
  const pageUrl = (page: number, token?: string) =>
    `${listUrl}?PageSize=${request.size}&Page=${page}${token ? `&PageToken=${encodeURIComponent(token)}` : ''}`;
  const last = shown[shown.length - 1];
  const meta: PageMeta = {
    page: request.page,
    page_size: request.size,
    first_page_url: pageUrl(0),
    previous_page_url: null,
    url: pageUrl(request.page, request.after ? encodePageCursor(request.after.at, request.after.id) : undefined),
    next_page_url: more && last ? pageUrl(request.page + 1, encodePageCursor(at(last).at, at(last).id)) : null,
    key,
  };
  return { [key]: shown.map(item), meta };
}
