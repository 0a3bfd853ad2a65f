import { stdSerializers } from 'pino';
import { QueryFailedError } from 'typeorm';
import { redactUrl, serializeError } from './redact';

describe('redactUrl', () => {
  it('hides the values of secret-looking query parameters and keeps the rest', () => {
    expect(redactUrl('/v1/sessions?api_key=sk_live_abc&limit=5')).toBe('/v1/sessions?api_key=[REDACTED]&limit=5');
    expect(redactUrl('/v1/events?access%5Ftoken=t&cursor=c')).toBe('/v1/events?access%5Ftoken=[REDACTED]&cursor=c');
    expect(redactUrl('/x?Authorization=Bearer%20k')).toBe('/x?Authorization=[REDACTED]');
    expect(redactUrl('/v1/sessions')).toBe('/v1/sessions');
  });
});

describe('serializeError', () => {
  it('keeps what failed, never the parameters of the statement or the values quoted by the driver', () => {
    const driverError = Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), {
      code: '22021',
      detail: 'Key (number)=(+2348030000001) already exists.',
    });
    const error = new QueryFailedError('INSERT INTO sessions VALUES ($1, $2)', ['+2348030000001', { secret: 'metadata' }], driverError);
    const logged = JSON.stringify(serializeError(error));
    expect(logged).toContain('QueryFailedError');
    expect(logged).toContain('22021');
    expect(logged).not.toContain('+2348030000001');
    expect(logged).not.toContain('metadata');
    // As pino's wrapErrorSerializer hands it over: its own serialization, the original error as `raw`.
    const wrapped = JSON.stringify(serializeError(stdSerializers.err(error)));
    expect(wrapped).toContain('22021');
    expect(wrapped).not.toContain('+2348030000001');
  });
});
