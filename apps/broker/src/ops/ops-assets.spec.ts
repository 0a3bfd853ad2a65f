import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { loadOpsAssets, OPS_CONTENT_SECURITY_POLICY } from './ops-assets';

describe('ops page assets', () => {
  const assets = loadOpsAssets();

  it('ship a script that parses as plain browser JavaScript', () => {
    expect(() => new Script(assets['ops.js'].body, { filename: 'ops.js' })).not.toThrow();
    expect(assets['ops.js'].body).toContain("new EventSource('/v1/health/cpaas/stream')");
  });

  it('load only their own stylesheet and script, from this origin', () => {
    const html = assets.page.body;
    expect(html).toContain('href="/ops/ops.css"');
    expect(html).toContain('src="/ops/ops.js"');
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(OPS_CONTENT_SECURITY_POLICY).toContain("script-src 'self'");
  });

  it('reference under /ops/ nothing but the files served', () => {
    const referenced = [...assets.page.body.matchAll(/(?:src|href)="\/ops\/([^"]*)"/g)].map((m) => m[1]).sort();
    expect(referenced).toEqual(['ops.css', 'ops.js']);
  });

  it('stop the start with the path of a file that is missing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ops-assets-'));
    try {
      await writeFile(join(dir, 'ops.html'), '<!doctype html>');
      await writeFile(join(dir, 'ops.css'), '');
      expect(() => loadOpsAssets(dir)).toThrow(`ops page file ${join(dir, 'ops.js')} cannot be read (ENOENT)`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
