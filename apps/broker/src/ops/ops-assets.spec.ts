import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Script } from 'node:vm';
import ts from 'typescript';
import { loadOpsAssets, OPS_ASSET_DIR, OPS_CONTENT_SECURITY_POLICY } from './ops-assets';

/**
 * TypeScript's checks of plain JavaScript files against the browser's DOM types (not strict: the script has
 * no annotations), per file, in one program.
 */
function domProblems(files: string[]): Record<string, string[]> {
  const program = ts.createProgram(files, {
    allowJs: true,
    checkJs: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    types: [],
  });
  const problems: Record<string, string[]> = Object.fromEntries(files.map((file) => [file, []]));
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const line = d.file ? d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1 : 0;
    (problems[d.file?.fileName ?? ''] ??= []).push(`line ${line}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`);
  }
  return problems;
}

describe('ops page assets', () => {
  const assets = loadOpsAssets();

  it('ship a script that parses as plain browser JavaScript', () => {
    expect(() => new Script(assets['ops.js'].body, { filename: 'ops.js' })).not.toThrow();
    expect(assets['ops.js'].body).toContain("new EventSource('/v1/health/cpaas/stream')");
  });

  it('ship a script that type-checks against the DOM, where a misspelt property fails', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ops-js-'));
    try {
      const shipped = join(OPS_ASSET_DIR, 'ops.js');
      const misspelt = join(dir, 'ops.js');
      await writeFile(
        misspelt,
        assets['ops.js'].body.replace("getElementById('updated').textContent", "getElementById('updated').textContnet"),
      );
      expect(domProblems([shipped, misspelt])).toEqual({
        [shipped]: [],
        [misspelt]: [expect.stringContaining("TS2551 Property 'textContnet' does not exist on type 'HTMLElement'")],
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);

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
