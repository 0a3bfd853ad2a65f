import { encodePageCursor } from '../../../common/pagination/page-cursor';
import { TwilioApiError } from './twilio-error';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, pageAnswer, pageRequest } from './twilio-page';

const at = (i: number) => new Date(Date.UTC(2030, 0, 1, 0, 0, i));
const rows = Array.from({ length: 5 }, (_, i) => ({ id: `0000000${i}-0000-4000-8000-000000000000`, createdAt: at(10 - i) }));
const answer = (size: number, shown = rows) =>
  pageAnswer(
    'sessions',
    'https://b.example/compat/twilio-proxy/v1/Services/KS1/Sessions',
    pageRequest({ PageSize: String(size) }),
    shown,
    (r) => ({ at: r.createdAt, id: r.id }),
    (r) => r.id,
  );

describe('Twilio paging', () => {
  it('takes PageSize from 1 to 1000, 50 when left out', () => {
    expect(pageRequest({}).size).toBe(DEFAULT_PAGE_SIZE);
    expect(DEFAULT_PAGE_SIZE).toBe(50);
    expect(pageRequest({ PageSize: '1' }).size).toBe(1);
    expect(pageRequest({ PageSize: String(MAX_PAGE_SIZE) }).size).toBe(1000);
    for (const bad of ['0', '1001', '2.5', 'x'])
      expect(() => pageRequest({ PageSize: bad })).toThrow(expect.objectContaining({ code: 80701 }) as unknown as TwilioApiError);
  });

  it('gives a next_page_url exactly when the list read more rows than the page holds', () => {
    expect(answer(5).meta.next_page_url).toBeNull();
    const first = answer(4);
    expect(first.sessions).toEqual(rows.slice(0, 4).map((r) => r.id));
    const next = new URL(first.meta.next_page_url!);
    expect(next.searchParams.get('PageSize')).toBe('4');
    expect(next.searchParams.get('Page')).toBe('1');
    // The next page starts after the last row shown.
    expect(pageRequest(Object.fromEntries(next.searchParams)).after).toEqual({ at: rows[3].createdAt, id: rows[3].id });
    expect(first.meta).toMatchObject({ page: 0, page_size: 4, key: 'sessions', previous_page_url: null });
    expect(first.meta.first_page_url).toBe('https://b.example/compat/twilio-proxy/v1/Services/KS1/Sessions?PageSize=4&Page=0');
  });

  it('refuses a PageToken it did not hand out, in Twilio’s words', () => {
    expect(() => pageRequest({ PageToken: 'not-ours' })).toThrow(
      expect.objectContaining({ code: 80701, message: expect.stringContaining('PageToken') }) as unknown as Error,
    );
    expect(pageRequest({ PageToken: encodePageCursor(rows[0].createdAt, rows[0].id), Page: '3' })).toMatchObject({
      page: 3,
      after: { id: rows[0].id },
    });
  });
});
