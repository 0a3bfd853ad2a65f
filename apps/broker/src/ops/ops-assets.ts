import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface OpsAsset {
  contentType: string;
  body: string;
}

type OpsAssetName = 'page' | 'ops.css' | 'ops.js';

/**
 * The page's files, beside this module: `npm run build` copies `assets/` into dist/ next to the
 * compiled code (tsc emits only JavaScript), and under Jest they are read from the source tree.
 */
export const OPS_ASSET_DIR = join(__dirname, 'assets');

const FILES: Readonly<Record<OpsAssetName, { file: string; contentType: string }>> = {
  page: { file: 'ops.html', contentType: 'text/html; charset=utf-8' },
  'ops.css': { file: 'ops.css', contentType: 'text/css; charset=utf-8' },
  'ops.js': { file: 'ops.js', contentType: 'text/javascript; charset=utf-8' },
};

/** Reads the three files once, at start: a build that lost one stops the start with its path, not a 500 later. */
export function loadOpsAssets(dir: string = OPS_ASSET_DIR): Readonly<Record<OpsAssetName, OpsAsset>> {
  const read = (name: OpsAssetName): OpsAsset => {
    const path = join(dir, FILES[name].file);
    try {
      return { contentType: FILES[name].contentType, body: readFileSync(path, 'utf8') };
    } catch (error) {
      throw new Error(`ops page file ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    }
  };
  return { page: read('page'), 'ops.css': read('ops.css'), 'ops.js': read('ops.js') };
}

/** Same-origin only: the page talks to this broker and loads nothing from elsewhere. */
export const OPS_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  'img-src data:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');
