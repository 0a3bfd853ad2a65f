import { OPS_PAGE_CSS } from './assets/ops-page-css';
import { OPS_PAGE_HTML } from './assets/ops-page-html';
import { OPS_PAGE_JS } from './assets/ops-page-script';

export interface OpsAsset {
  contentType: string;
  body: string;
}

/**
 * The page ships inside the compiled code, as string constants: `npm run build` (plain tsc) copies
 * no other files, and the same module works from the source tree under Jest and from dist/.
 */
export const OPS_ASSETS: Readonly<Record<'page' | 'ops.css' | 'ops.js', OpsAsset>> = {
  page: { contentType: 'text/html; charset=utf-8', body: OPS_PAGE_HTML },
  'ops.css': { contentType: 'text/css; charset=utf-8', body: OPS_PAGE_CSS },
  'ops.js': { contentType: 'text/javascript; charset=utf-8', body: OPS_PAGE_JS },
};

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
