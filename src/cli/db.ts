/**
 * Database commands: `migrate`, `seed` (demo data, idempotent), `migration:create` (writes a new
 * migration from the difference between the entities and an up-to-date scratch database) and
 * `rotate-signing-key` (the development identity provider signs new tokens with a fresh key; tokens
 * signed before keep verifying until they expire, and running services pick the key up on its first use).
 */
import 'reflect-metadata';
import { loadConfig, readEnvFile } from '../platform/config';
import { openDatabase } from '../platform/database/database';
import { loadDemoData } from '../seed/demo-data';
import { createLogger } from '../platform/logger';
import { IdentityProviderService } from '../modules/identity/identity-provider.service';
import { DATA_MODEL } from '../../mikro-orm.config';

const COMMANDS = ['migrate', 'seed', 'migration:create', 'rotate-signing-key'];

async function main(command: string | undefined): Promise<void> {
  // Before anything starts: a typo must not open (or start) a database.
  if (!command || !COMMANDS.includes(command)) throw new Error(`usage: db.js ${COMMANDS.join(' | ')}`);
  readEnvFile();
  const config = loadConfig();
  // The release step itself: whatever the instances are told (DATABASE_MIGRATE_ON_START), this one applies them.
  if (command === 'migrate') config.migrateOnStart = true;
  const log = createLogger(config);
  const db = await openDatabase(config, DATA_MODEL, log);
  try {
    if (command === 'migrate') {
      // openDatabase applied them, under the lock the starting instances take too, and logged which.
    } else if (command === 'seed') {
      const created = await loadDemoData(db.orm.em.fork());
      log.info({ created }, created ? 'demo data loaded' : 'demo data already present');
    } else if (command === 'migration:create') {
      const result = await db.orm.getMigrator().createMigration('src/migrations', false, false);
      console.log(result.fileName ? `wrote src/migrations/${result.fileName}: add it to src/migrations/index.ts` : 'no changes');
    } else if (command === 'rotate-signing-key') {
      const key = await new IdentityProviderService(db.orm.em.fork(), config).rotateSigningKey();
      console.log(`new signing key ${key.kid}; earlier keys are retired`);
    } else {
      throw new Error(`usage: db.js ${COMMANDS.join(' | ')}`);
    }
  } finally {
    await db.close();
  }
}

main(process.argv[2]).catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
