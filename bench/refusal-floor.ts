import Koa from 'koa';

/**
 * The floor of a refusal (bench/abuse.bench.ts, scenario refusal): bare Koa answering every request 429 with a
 * GraphQL error body and Retry-After, nothing else; in a process of its own, its CPU time over IPC as the service's.
 */
const app = new Koa();
const body = JSON.stringify({ errors: [{ message: 'Too many GraphQL operations', extensions: { code: 'RATE_LIMITED' } }] });
app.use((ctx) => {
  ctx.status = 429;
  ctx.set('Retry-After', '30');
  ctx.type = 'application/json';
  ctx.body = body;
});
const server = app.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.send!({ cmd: 'listening', url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}` });
});
let since = process.cpuUsage();
process.on('message', (message: { cmd: string }) => {
  if (message.cmd === 'begin') {
    since = process.cpuUsage();
    process.send!({ cmd: 'begun' });
  } else if (message.cmd === 'end') {
    const used = process.cpuUsage(since);
    process.send!({ cmd: 'ended', cpuMs: (used.user + used.system) / 1000 });
  } else if (message.cmd === 'stop') {
    server.close(() => process.exit(0));
  }
});
