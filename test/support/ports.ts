import { createServer } from 'node:net';

/**
 * A TCP port nothing listens on right now, chosen by the OS: servers a test starts itself take one, so that
 * two test runs on one machine (two checkouts, CI beside a developer) never fight over a fixed number.
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
