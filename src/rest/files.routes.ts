import Router from '@koa/router';
import type { Config } from '../config';
import type { AppState } from '../http/state';
import { readSignedFile } from '../services/file-url';

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
    // The path and query as sent, not decoded: only the exact URL the service signed is served.
    const file = await readSignedFile(ctx.state.em, config, ctx.path.slice('/files/'.length), ctx.querystring);
    ctx.type = file.contentType;
    ctx.set('Content-Disposition', contentDisposition(file.name));
    ctx.set('Cache-Control', 'private, no-store');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.body = file.content;
  });
  return router;
}
