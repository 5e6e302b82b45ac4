import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { chromium, type BrowserContext } from 'playwright-core';

/** Debian's `chromium` package, which .ci/run installs when it is missing (../shared/stack-notes.md). */
const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** Why no browser test can run here, or null when Chromium is installed. */
export function chromiumMissing(): string | null {
  return existsSync(CHROMIUM_PATH)
    ? null
    : `no Chromium at ${CHROMIUM_PATH}: install Debian's chromium package (apt-get install chromium), as .ci/run does where it can`;
}

/** Headless Chromium with a fresh profile and nothing of its own on the network (no updates, sync or QUIC probes). */
export async function launchChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = await mkdtemp(path.join(os.tmpdir(), 'tender-bff-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
    viewport: { width: 1400, height: 900 },
  });
  return {
    context,
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** Bundles a browser entry (TypeScript, with its npm imports) into one script, as a front end's build would. */
export async function bundle(entry: string): Promise<string> {
  // Apollo Client's development build: its warnings (a cache write missing a field) reach the page's console.
  const result = await build({
    entryPoints: [entry], bundle: true, write: false, format: 'iife', platform: 'browser', target: 'chrome120',
    conditions: ['development'], logLevel: 'error',
  });
  return result.outputFiles[0].text;
}

/** A static site of its own (another origin than the service's): an HTML page and its script. */
export async function servePage(html: string, script: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const [type, body] = req.url === '/' ? ['text/html; charset=utf-8', html] : req.url === '/app.js' ? ['application/javascript', script] : [null, null];
    if (!type) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': type, 'Cache-Control': 'no-store' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
