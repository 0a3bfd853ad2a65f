import { timeOrderedUuid } from './time-ordered-id';

const at = Date.UTC(2030, 0, 1, 12, 0, 0, 0);

describe('a Proxy Session’s time-ordered id', () => {
  it('is a version 7, RFC 9562 variant UUID carrying its millisecond', () => {
    const id = timeOrderedUuid(at + 700);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(at + 700);
  });

  it('sorts ids of one second as they were made, 1 ms apart, whatever their random part', () => {
    for (let round = 0; round < 50; round++) {
      const earlier = timeOrderedUuid(at + 998);
      const later = timeOrderedUuid(at + 999);
      expect(earlier < later).toBe(true);
    }
  });
});
