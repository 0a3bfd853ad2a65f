import { Script } from 'node:vm';
import { OPS_ASSETS, OPS_CONTENT_SECURITY_POLICY } from './ops-assets';

describe('ops page assets', () => {
  it('ship a script that parses as plain browser JavaScript', () => {
    expect(() => new Script(OPS_ASSETS['ops.js'].body, { filename: 'ops.js' })).not.toThrow();
    expect(OPS_ASSETS['ops.js'].body).toContain("new EventSource('/v1/health/cpaas/stream')");
  });

  it('load only their own stylesheet and script, from this origin', () => {
    const html = OPS_ASSETS.page.body;
    expect(html).toContain('href="/ops/ops.css"');
    expect(html).toContain('src="/ops/ops.js"');
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(OPS_CONTENT_SECURITY_POLICY).toContain("script-src 'self'");
  });
});
