import { Controller, Get, Param, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { ProblemException } from '../common/problem';

/** Where swagger-ui-dist (a dependency of @nestjs/swagger) keeps Swagger UI's built files. */
const SWAGGER_UI_DIR = dirname(createRequire(join(__dirname, 'docs.controller.js')).resolve('swagger-ui-dist/package.json'));

/** Swagger UI's files the page loads, by name: read from swagger-ui-dist on first use, then kept. */
const ASSET_TYPES: Readonly<Record<string, string>> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

/**
 * The API docs page (`/docs`): Swagger UI over `/docs/openapi.json`, which SwaggerModule serves.
 * SwaggerModule's own page needs @fastify/static, whose ESM-only dependency Jest cannot load
 * before Node 24.9, so the page and its files are served here.
 */
@ApiExcludeController()
@Controller('docs')
export class DocsController {
  private readonly assets = new Map<string, Buffer>();

  @Get()
  page(@Req() request: FastifyRequest, @Res() reply: FastifyReply): void {
    // Relative links, as SwaggerModule's page has them: "/docs/" and "/docs" are the same page.
    const base = request.url.split('?')[0].endsWith('/') ? './' : './docs/';
    void reply.type('text/html; charset=utf-8').send(page(base));
  }

  @Get(':asset')
  asset(@Param('asset') name: string, @Res() reply: FastifyReply): void {
    const type = Object.hasOwn(ASSET_TYPES, name) ? ASSET_TYPES[name] : undefined;
    if (!type)
      throw new ProblemException({ status: 404, slug: 'not-found', title: 'Not found', detail: `No docs page file named "${name}".` });
    let body = this.assets.get(name);
    if (!body) {
      body = readFileSync(join(SWAGGER_UI_DIR, name));
      this.assets.set(name, body);
    }
    void reply.type(type).header('Cache-Control', 'public, max-age=3600').send(body);
  }
}

function page(base: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="UTF-8">
  <title>Session Broker API</title>
  <link rel="stylesheet" type="text/css" href="${base}swagger-ui.css">
  <link rel="icon" type="image/png" href="${base}favicon-32x32.png" sizes="32x32">
  <link rel="icon" type="image/png" href="${base}favicon-16x16.png" sizes="16x16">
  <style>html { box-sizing: border-box; overflow-y: scroll; } *, *:before, *:after { box-sizing: inherit; } body { margin: 0; background: #fafafa; }</style>
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="${base}swagger-ui-bundle.js"></script>
  <script src="${base}swagger-ui-standalone-preset.js"></script>
  <script>
    window.ui = SwaggerUIBundle({
      url: '${base}openapi.json',
      dom_id: '#swagger-ui',
      deepLinking: true,
      presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
      plugins: [SwaggerUIBundle.plugins.DownloadUrl],
      layout: 'StandaloneLayout',
    });
  </script>
</body>
</html>
`;
}
