import { decodePageCursor, decodePrecisePageCursor, encodePageCursor, encodePrecisePageCursor } from './page-cursor';

const ID = '0b9a4c1e-8f6d-4c3b-9a2e-1f0e2d3c4b5a';
const forge = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('page cursors', () => {
  it('round-trips what it wrote', () => {
    const at = new Date('2030-01-31T23:59:59.999Z');
    expect(decodePageCursor(encodePageCursor(at, ID))).toEqual({ at, id: ID });
  });

  it.each([
    ['a date that does not exist', ['2030-02-30T00:00:00.000Z', ID]],
    ['a number of milliseconds', [-8_640_000_000_000_000, ID]],
    ['an instant PostgreSQL cannot hold', ['+275760-09-13T00:00:00.000Z', ID]],
    ['an id that is not a UUID', ['2030-01-01T00:00:00.000Z', "1' OR '1'='1"]],
    ['more parts', ['2030-01-01T00:00:00.000Z', ID, 1]],
    ['not a pair', { at: 1 }],
  ])('refuses %s with a 400 naming the cursor', (_name, value) => {
    expect(() => decodePageCursor(forge(value))).toThrow(
      expect.objectContaining({ status: 400, detail: expect.stringMatching(/^cursor:/) }),
    );
  });

  it('refuses text that is not base64url JSON', () => {
    expect(() => decodePageCursor('not-a-cursor')).toThrow(expect.objectContaining({ status: 400 }));
  });

  it('keeps a PostgreSQL instant to the microsecond, and refuses one that is not written as such', () => {
    expect(decodePrecisePageCursor(encodePrecisePageCursor('2030-01-31T23:59:59.999123Z', ID))).toEqual({
      at: '2030-01-31T23:59:59.999123Z',
      id: ID,
    });
    for (const at of ['2030-01-31T23:59:59.999Z', '2030-02-30T00:00:00.000001Z', "2030-01-31T23:59:59.999123Z' OR 1=1"])
      expect(() => decodePrecisePageCursor(forge([at, ID]))).toThrow(expect.objectContaining({ status: 400 }));
  });
});
