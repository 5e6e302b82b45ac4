/**
 * Database commands: `migrate`, `seed` (demo data, idempotent) and `migration:create` (writes a new
 * migration from the difference between the entities and an up-to-date scratch database).
 */
import 'reflect-metadata';
import { loadConfig } from '../config';
import { openDatabase } from '../database';
import { loadDemoData } from '../seed/demo-data';
import { createLogger } from '../logger';

async function main(command: string | undefined): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config);
  const db = await openDatabase(config, log);
  try {
    if (command === 'migrate') {
      log.info('migrations applied');
    } else if (command === 'seed') {
      const created = await loadDemoData(db.orm.em.fork());
      log.info({ created }, created ? 'demo data loaded' : 'demo data already present');
    } else if (command === 'migration:create') {
      const result = await db.orm.getMigrator().createMigration('src/migrations', false, false);
      console.log(result.fileName ? `wrote src/migrations/${result.fileName}: add it to src/migrations/index.ts` : 'no changes');
    } else {
      throw new Error('usage: db.js migrate | seed | migration:create');
    }
  } finally {
    await db.close();
  }
}

main(process.argv[2]).catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
