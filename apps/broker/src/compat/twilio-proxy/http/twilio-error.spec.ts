import { HttpException, NotFoundException, type ArgumentsHost } from '@nestjs/common';
import { ProblemException } from '../../../common/problem';
import { basicCredentials } from './twilio-basic-auth.guard';
import { TwilioApiError, TwilioErrorFilter } from './twilio-error';

/** What the filter writes for `exception`, as a Twilio client reads it. */
function written(exception: unknown): { status: number; body: Record<string, unknown>; headers: Record<string, string> } {
  const out = { status: 0, body: {} as Record<string, unknown>, headers: {} as Record<string, string> };
  const response = {
    headersSent: false,
    hasHeader: (name: string) => name.toLowerCase() in out.headers,
    setHeader: (name: string, value: string) => (out.headers[name.toLowerCase()] = value),
    status(code: number) {
      out.status = code;
      return this;
    },
    type() {
      return this;
    },
    send(text: string) {
      out.body = JSON.parse(text) as Record<string, unknown>;
    },
  };
  const host = {
    switchToHttp: () => ({
      getResponse: () => response,
      getRequest: () => ({ complete: true, path: '/compat/twilio-proxy/v1/Nope', headers: {} }),
    }),
  };
  new TwilioErrorFilter().catch(exception, host as unknown as ArgumentsHost);
  return out;
}

describe('Twilio’s error bodies', () => {
  it('writes code, message, more_info and status', () => {
    expect(written(new TwilioApiError(400, 80609, 'A Session may have at most 2 participants.'))).toMatchObject({
      status: 400,
      body: {
        code: 80609,
        message: 'A Session may have at most 2 participants.',
        more_info: 'https://www.twilio.com/docs/errors/80609',
        status: 400,
      },
    });
  });

  it.each([
    [new ProblemException({ status: 401, slug: 'unauthorized', title: 'x', detail: 'no key' }), 401, 20003],
    [new ProblemException({ status: 429, slug: 'rate-limited', title: 'x', detail: 'slow down' }), 429, 20429],
    [new ProblemException({ status: 409, slug: 'session-not-active', title: 'x', detail: 'closed' }), 409, 80608],
    [new ProblemException({ status: 503, slug: 'no-provider', title: 'x', detail: 'none' }), 503, 20503],
    [new NotFoundException('Cannot GET /x'), 404, 20404],
  ])('writes the broker’s own %s with Twilio’s code for it', (exception, status, code) => {
    const out = written(exception);
    expect(out.body).toMatchObject({ status, code });
    expect(out.status).toBe(status);
  });

  it('asks for Basic credentials on a 401 and hides what failed unexpectedly behind an error id', () => {
    expect(written(new TwilioApiError(401, 20003, 'Authenticate')).headers['www-authenticate']).toMatch(/^Basic /);
    const out = written(new Error('boom: a secret detail'));
    expect(out).toMatchObject({ status: 500, body: { code: 20500 } });
    expect(String(out.body.message)).not.toContain('secret');
    expect(written(new HttpException('Payload Too Large', 413)).body).toMatchObject({ status: 413 });
  });

  it('reads Basic credentials, and nothing else', () => {
    const basic = (text: string) => `Basic ${Buffer.from(text).toString('base64')}`;
    expect(basicCredentials(basic('ACabc:sk_key:with:colons'))).toEqual({ user: 'ACabc', password: 'sk_key:with:colons' });
    for (const header of [undefined, 'Bearer sk_key', basic('no-colon'), basic(':password'), basic('user:'), 'Basic !!!'])
      expect(basicCredentials(header)).toBeNull();
  });
});
