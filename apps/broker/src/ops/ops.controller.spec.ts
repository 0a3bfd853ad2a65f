/** GET /ops and its two files as a browser meets them: no credential, the right types, a CSP that loads nothing from elsewhere. */
import { controllerSetup, expectProblem, type ControllerContext } from '../../../../test/support/controller-context';
import { OPS_CONTENT_SECURITY_POLICY } from './ops-assets';
import { OpsController } from './ops.controller';

describe('OpsController', () => {
  let ctx: ControllerContext;
  beforeAll(async () => {
    ctx = await controllerSetup([OpsController]);
  });
  afterAll(() => ctx.close());

  it.each([
    ['/ops', 'text/html; charset=utf-8', '<!doctype html>'],
    ['/ops/ops.css', 'text/css; charset=utf-8', undefined],
    ['/ops/ops.js', 'text/javascript; charset=utf-8', undefined],
  ])('GET %s is 200 %s, revalidated, under the page’s CSP, never sniffed', async (path, type, starts) => {
    const res = await ctx.http().get(path);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe(type);
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers['content-security-policy']).toBe(OPS_CONTENT_SECURITY_POLICY);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.text.length).toBeGreaterThan(100);
    if (starts) expect(res.text.toLowerCase().startsWith(starts)).toBe(true);
  });

  it.each(['/ops/ops.html', '/ops/..%2Fops-assets.ts', '/ops/secrets.json'])(
    'GET %s is a 404 problem: only the two files are served',
    async (path) => {
      expectProblem(await ctx.http().get(path), 404);
    },
  );
});
