import net from 'node:net';

/**
 * A TCP proxy in front of a test server that, while `cutting`, passes requests on and drops the answers: as soon as
 * the server starts answering, both connections are destroyed. The request has run (its write committed); the client
 * sees the connection reset, as over a network that failed at the worst moment.
 */
export interface CuttingProxy {
  url: string;
  cutting: boolean;
  /** Answers dropped so far. */
  cut: number;
  close(): Promise<void>;
}

export async function startCuttingProxy(target: string): Promise<CuttingProxy> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<net.Socket>();
  const proxy: CuttingProxy = { url: '', cutting: true, cut: 0, close: async () => undefined };
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port), hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream);
    upstream.on('data', (chunk) => {
      if (proxy.cutting) {
        proxy.cut++;
        upstream.destroy();
        client.resetAndDestroy();
        return;
      }
      client.write(chunk);
    });
    upstream.on('end', () => client.end());
    client.on('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  proxy.close = async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return proxy;
}
