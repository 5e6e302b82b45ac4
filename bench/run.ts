import { run as abuse } from './abuse.bench';
import { run as archive } from './archive.bench';
import { run as auth } from './auth.bench';
import { run as bulk } from './bulk.bench';
import { run as compression } from './compression.bench';
import { run as dashboard } from './dashboard.bench';
import { run as fanout } from './fanout.bench';
import { run as idempotency } from './idempotency.bench';
import { run as leveling } from './leveling.bench';
import { run as overload } from './overload.bench';
import { run as rateLimit } from './rate-limit.bench';
import { run as replicas } from './replicas.bench';
import { run as statistics } from './statistics.bench';
import { run as subscriptions } from './subscriptions.bench';
import { run as tracing } from './tracing.bench';
import { run as webhooks } from './webhooks.bench';
import { run as writeCeiling } from './write-ceiling.bench';

/**
 * `npm run bench [name...]`: runs the registered benchmarks one after the other (all of them when no
 * name is given). Each benchmark works in a scratch database of its own and drops it when done.
 */
const BENCHES: Record<string, () => Promise<void>> = {
  abuse,
  archive,
  auth,
  bulk,
  compression,
  dashboard,
  fanout,
  idempotency,
  leveling,
  overload,
  'rate-limit': rateLimit,
  replicas,
  statistics,
  subscriptions,
  tracing,
  webhooks,
  'write-ceiling': writeCeiling,
};

async function main(names: string[]): Promise<void> {
  const unknown = names.filter((n) => !(n in BENCHES));
  if (unknown.length) throw new Error(`unknown benchmark(s): ${unknown.join(', ')}; known: ${Object.keys(BENCHES).join(', ')}`);
  for (const name of names.length ? names : Object.keys(BENCHES)) {
    console.log(`== ${name}`);
    await BENCHES[name]();
  }
}

main(process.argv.slice(2)).catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
