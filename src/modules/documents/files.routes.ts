import Router from '@koa/router';
import type { Config } from '../../platform/config';
import type { AppState } from '../../platform/http/state';
import { readSignedFile } from './file-url';

/** `filename*` per RFC 6266/5987, with an ASCII fallback for old clients. */
function contentDisposition(name: string): string {
  const ascii = name.normalize('NFKD').replace(/[^\x20-\x7e]/g, '').replace(/["\\]/g, '_') || 'download';
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/**
 * Files of document versions behind the signed URLs of #16 (decisions.md section 4). No bearer token:
 * the signature is the permission; an altered or expired URL is a 403.
 */
export function fileRoutes(config: Config): Router<AppState> {
  const router = new Router<AppState>();
  router.get('/files/:fileId', async (ctx) => {
    // The request target exactly as sent, not decoded, fragment included (ctx.path and ctx.querystring would
    // drop one): only the URL the service signed is served.
    const q = ctx.url.indexOf('?');
    const [path, query] = q < 0 ? [ctx.url, ''] : [ctx.url.slice(0, q), ctx.url.slice(q + 1)];
    const file = await readSignedFile(ctx.state.em, config, path.slice('/files/'.length), query);
    ctx.type = file.contentType;
    ctx.set('Content-Disposition', contentDisposition(file.name));
    ctx.set('Cache-Control', 'private, no-store');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.body = file.content;
  });
  return router;
}
