import net from 'node:net';

/**
 * A TCP proxy in front of a server (a PostgreSQL of a test's own) whose target can be changed while it runs: what a
 * virtual IP, a DNS name or a cloud endpoint does at a failover ("the address switched"). Each new connection goes to
 * the target of the moment; connections already open stay with the server they reached (as TCP connections to a moved
 * address do) unless `cutAll()` resets them, as a failover that fences the old host does. A connection to a target
 * that refuses (a server stopped) is closed at once.
 */
export interface SwitchableProxy {
  /** The target's URL with the proxy's host and port (`postgres://postgres@127.0.0.1:<port>` for a server URL). */
  url: string;
  port: number;
  /** The current target, `host:port`. */
  readonly target: string;
  /** Connections accepted so far, and those currently open. */
  readonly accepted: number;
  readonly open: number;
  /** New connections go to `target` (a URL, or `host:port`) from now on; `cut` also resets every open connection. */
  switchTo(target: string, opts?: { cut?: boolean }): number;
  /** Resets every open connection on both sides (RST to the client): what a cut network or a fenced host does. */
  cutAll(): number;
  close(): Promise<void>;
}

function hostPort(target: string): { host: string; port: number } {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(target)) {
    const u = new URL(target);
    return { host: u.hostname, port: Number(u.port || 5432) };
  }
  const [host, port] = target.split(':');
  return { host, port: Number(port) };
}

export async function startSwitchableProxy(target: string): Promise<SwitchableProxy> {
  let current = hostPort(target);
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();
  let accepted = 0;
  const server = net.createServer((client) => {
    accepted++;
    const upstream = net.connect(current.port, current.host);
    const pair = { client, upstream };
    pairs.add(pair);
    const drop = () => {
      pairs.delete(pair);
      if (!client.destroyed) client.destroy();
      if (!upstream.destroyed) upstream.destroy();
    };
    client.on('error', drop);
    upstream.on('error', drop);
    client.on('close', drop);
    upstream.on('close', drop);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  let url: string;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(target)) {
    const u = new URL(target);
    u.hostname = '127.0.0.1';
    u.port = String(port);
    url = u.toString().replace(/\/$/, '');
  } else {
    url = `127.0.0.1:${port}`;
  }
  const cutAll = () => {
    const n = pairs.size;
    for (const pair of [...pairs]) {
      pairs.delete(pair);
      pair.upstream.destroy();
      pair.client.resetAndDestroy();
    }
    return n;
  };
  return {
    url,
    port,
    get target() {
      return `${current.host}:${current.port}`;
    },
    get accepted() {
      return accepted;
    },
    get open() {
      return pairs.size;
    },
    switchTo(next, opts = {}) {
      current = hostPort(next);
      return opts.cut ? cutAll() : 0;
    },
    cutAll,
    async close() {
      cutAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
