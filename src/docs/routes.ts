import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createRequire } from 'node:module';
import { defineRoute, type RouteSpec } from '../http/route.js';
import { NotFound } from '../errors.js';

const require = createRequire(import.meta.url);
// swagger-ui-dist ships the interactive reference as static files: served from here, no CDN (the box is often offline).
const SWAGGER_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>cropwalk API</title>
<link rel="stylesheet" href="/api/docs/assets/swagger-ui.css"><link rel="icon" href="/api/docs/assets/favicon-32x32.png"></head>
<body><div id="swagger-ui"></div>
<script src="/api/docs/assets/swagger-ui-bundle.js"></script>
<script src="/api/docs/init.js"></script></body></html>`;

const INIT = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true, persistAuthorization: true });`;

export function docsRoutes(document: () => unknown): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/openapi.json',
      operationId: 'get_openapi',
      summary: 'This OpenAPI 3.1 document',
      tags: ['Status'],
      auth: 'none',
      responses: { 200: { description: 'The document.', schema: { type: 'object' } } },
      handler: () => document(),
    }),
    defineRoute({
      method: 'get',
      path: '/api/docs',
      operationId: 'get_docs',
      summary: 'The interactive API reference (served from local files)',
      tags: ['Status'],
      auth: 'none',
      responses: { 200: { description: 'HTML page.', contentType: 'text/html' } },
      handler: ({ http: ctx }) => {
        ctx.type = 'text/html; charset=utf-8';
        ctx.set('Content-Security-Policy', "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'");
        ctx.body = PAGE;
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/docs/init.js',
      operationId: 'get_docs_init',
      summary: 'Start-up script of the reference page',
      tags: ['Status'],
      auth: 'none',
      responses: { 200: { description: 'JavaScript.', contentType: 'application/javascript' } },
      handler: ({ http: ctx }) => {
        ctx.type = 'application/javascript; charset=utf-8';
        ctx.body = INIT;
      },
    }),
    defineRoute<{ file: string }>({
      method: 'get',
      path: '/api/docs/assets/{file}',
      operationId: 'get_docs_asset',
      summary: 'A static file of the reference page',
      tags: ['Status'],
      auth: 'none',
      params: { type: 'object', required: ['file'], properties: { file: { enum: Object.keys(ASSETS) } } },
      responses: { 200: { description: 'The file.', contentType: 'application/octet-stream' } },
      handler: async ({ http: ctx, params }) => {
        const type = ASSETS[params.file];
        if (!type) throw new NotFound('file');
        ctx.type = type;
        ctx.set('Cache-Control', 'public, max-age=86400');
        ctx.body = await readFile(path.join(SWAGGER_DIR, params.file));
      },
    }),
  ];
}
