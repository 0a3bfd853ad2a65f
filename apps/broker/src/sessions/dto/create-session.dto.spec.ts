import { createValidationPipe } from '../../common/problem';
import { CreateSessionDto, MAX_TTL_SECONDS, ParticipantDto, readPlainCreateSession } from './create-session.dto';

/** The same rules through class-transformer and class-validator alone: the DTO without its plain reading. */
class DecoratedOnly extends CreateSessionDto {
  static override readonly readPlainly = () => undefined;
}

const pipe = createValidationPipe();
const throughDecorators = (body: unknown) => pipe.transform(body, { type: 'body', metatype: DecoratedOnly });

const ABSENT = Symbol('absent');
/** Each field's values: valid, on each side of each bound, of the wrong type, null, absent. */
const POOLS: Record<string, unknown[]> = {
  channel: [ABSENT, 'sms', 'voice', 'fax', 'SMS', null, 1, ['sms']],
  channels: [
    ABSENT,
    ['sms'],
    ['voice'],
    ['voice', 'sms'],
    ['sms', 'voice'],
    [],
    ['sms', 'sms'],
    ['fax'],
    'sms',
    null,
    ['sms', 'voice', 'sms'],
    [null],
  ],
  participants: [
    ABSENT,
    [{ number: '+2348031234567' }, { number: '+2348031234568' }],
    [{ number: '08031234567' }, { number: '+44 20 7946 0958' }],
    [{ number: '+2348031234567' }, { number: '+2348031234567' }],
    [{ number: '+2348031234567' }],
    [{ number: '+2348031234567' }, { number: '+2348031234568' }, { number: '+2348031234569' }],
    [{ number: '+2348031234567', name: 'x' }, { number: '+2348031234568' }],
    [{ number: 2348031234567 }, { number: '+2348031234568' }],
    [{ number: 'not a number' }, { number: '+2348031234568' }],
    [{ number: '+1234' }, { number: '+12345' }],
    [{ number: '+1'.padEnd(26, '0') }, { number: '+1'.padEnd(27, '0') }],
    [{}, { number: '+2348031234568' }],
    [null, { number: '+2348031234568' }],
    ['+2348031234567', '+2348031234568'],
    { 0: { number: '+2348031234567' }, 1: { number: '+2348031234568' } },
    null,
  ],
  ttlSeconds: [ABSENT, 60, 59, 3600, MAX_TTL_SECONDS, MAX_TTL_SECONDS + 1, 600.5, '600', null, -60, 0],
  idleTtlSeconds: [ABSENT, 60, 59, 120, MAX_TTL_SECONDS, MAX_TTL_SECONDS + 1, 120.5, '120', null],
  numberSelection: [ABSENT, 'any', 'prefer-sticky', 'sticky', null, 1],
  other: [ABSENT, { callbackUrl: 'https://a.example/hook' }, { metadata: { ride: 1 } }, { uniqueName: 'ride-1' }, { bogus: 1 }],
};

function body(choice: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(choice)) {
    if (value === ABSENT) continue;
    if (field === 'other') Object.assign(out, value);
    else out[field] = value;
  }
  return out;
}

/**
 * Every value of each field with the others valid, then pseudo-random mixes, each field kept valid three times in
 * four so that many mixes are accepted (a fixed seed: the same cases each run).
 */
function cases(): Array<Record<string, unknown>> {
  const valid = {
    channel: ABSENT,
    channels: ['sms'],
    participants: POOLS.participants[1],
    ttlSeconds: ABSENT,
    idleTtlSeconds: ABSENT,
    numberSelection: ABSENT,
    other: ABSENT,
  };
  const all: Array<Record<string, unknown>> = [];
  for (const [field, pool] of Object.entries(POOLS)) for (const value of pool) all.push(body({ ...valid, [field]: value }));
  let seed = 34;
  const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const mixed = (field: string, pool: unknown[]) =>
    next() < 0.75 ? valid[field as keyof typeof valid] : pool[Math.floor(next() * pool.length)];
  for (let i = 0; i < 3000; i++)
    all.push(body(Object.fromEntries(Object.entries(POOLS).map(([field, pool]) => [field, mixed(field, pool)]))));
  return all;
}

describe('readPlainCreateSession, the validation pipe’s fast path for a create body', () => {
  it('reads a body only when the decorators accept it, into the instance the pipe makes of it', async () => {
    let read = 0;
    let accepted = 0;
    for (const candidate of cases()) {
      const plain = readPlainCreateSession(structuredClone(candidate));
      const decorated = await throughDecorators(structuredClone(candidate)).then(
        (dto) => dto as CreateSessionDto,
        () => undefined,
      );
      if (decorated) accepted++;
      if (plain === undefined) continue;
      read++;
      if (!decorated) throw new Error(`read plainly, refused by the decorators: ${JSON.stringify(candidate)}`);
      expect(plain).toBeInstanceOf(CreateSessionDto);
      for (const participant of plain.participants) expect(participant).toBeInstanceOf(ParticipantDto);
      expect({ ...plain, participants: plain.participants.map((p) => ({ ...p })) }).toEqual({
        ...decorated,
        participants: decorated.participants.map((p) => ({ ...p })),
      });
    }
    // Not vacuous: most bodies the decorators accept here are plain ones, and the fast path reads them.
    expect(accepted).toBeGreaterThan(100);
    expect(read).toBeGreaterThan(accepted / 2);
  });

  it('reads the common create, channel or channels, and leaves a callback URL, metadata or a null to the decorators', () => {
    const participants = [{ number: '+2348031234567' }, { number: '+2348031234568' }];
    expect(readPlainCreateSession({ channel: 'sms', participants })).toMatchObject({ channel: 'sms', participants });
    expect(readPlainCreateSession({ channels: ['voice', 'sms'], participants, ttlSeconds: 600 })).toMatchObject({
      channels: ['voice', 'sms'],
      ttlSeconds: 600,
    });
    expect(readPlainCreateSession({ channel: 'sms', participants, callbackUrl: 'https://a.example/hook' })).toBeUndefined();
    expect(readPlainCreateSession({ channel: 'sms', participants, metadata: {} })).toBeUndefined();
    expect(readPlainCreateSession({ channel: 'sms', participants, ttlSeconds: null })).toBeUndefined();
  });

  it('is what the pipe answers for the common create, and the decorators still refuse the rest with their messages', async () => {
    const participants = [{ number: '+2348031234567' }, { number: '+2348031234568' }];
    const metadata = { type: 'body' as const, metatype: CreateSessionDto };
    await expect(pipe.transform({ channel: 'sms', participants }, metadata)).resolves.toBeInstanceOf(CreateSessionDto);
    await expect(pipe.transform({ channel: 'sms', participants, ttlSeconds: 59 }, metadata)).rejects.toMatchObject({
      errors: [{ field: 'ttlSeconds', message: 'ttlSeconds must be at least 60' }],
    });
  });
});
