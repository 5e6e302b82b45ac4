// First, as in src/server.ts: tracing, when OTEL_* configures it, patches `pg` and `http` before they load.
import '../src/platform/telemetry/preload';
import 'reflect-metadata';
import { MikroORM } from '@mikro-orm/postgresql';
import { ormConfig } from '../mikro-orm.config';
import { createApp, listen } from '../src/app';
import { loadConfig } from '../src/platform/config';
import { createLogger } from '../src/platform/logger';
import type { RecordedStatement } from './server-process';
import { answerProbes, StatementRecorder } from './probe';

/**
 * The service as `npm start` runs it (src/app.ts, production configuration), in a process of its own so that
 * its memory is its own, plus the probe a benchmark drives over IPC (bench/probe.ts): between `begin` and `end`
 * it counts SQL statements, CPU time, heap bytes allocated and the peak resident set; between `record` and
 * `recorded` it records the statements knex sends (from knex's `query` and `query-response` events).
 */

/** What knex's `query` and `query-response` events carry of a statement. */
interface KnexQueryEvent {
  sql: string;
  bindings?: unknown[];
  __knexUid?: string;
  __knexTxId?: string;
  __knexQueryUid?: string;
}

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const orm = await MikroORM.init(ormConfig(config.databaseUrl!, {}, config.database));
  const app = await createApp({ config, orm, log: createLogger(config) });
  const running = await listen(app, '127.0.0.1', 0);
  // Tokens are bound to the issuer: the address really listened at.
  config.publicUrl = running.url;
  config.auth.issuer = running.url;

  let statements = 0;
  const recorder = new StatementRecorder();
  // While recording: each statement, found again by knex's query uid when its answer comes.
  const recording = new Map<string, RecordedStatement | null>();
  orm.em.getKnex()
    .on('query', (q: KnexQueryEvent) => {
      statements++;
      if (!recorder.on) return;
      // This process's one ORM is the primary's (no replicas are configured here): every statement goes there.
      // MikroORM writes the values into the text itself (its formatQuery): knex's bindings are empty.
      const s = recorder.sent('primary', String(q.__knexUid ?? ''), q.__knexTxId ?? null, q.sql, q.bindings ?? []);
      if (q.__knexQueryUid) recording.set(q.__knexQueryUid, s);
    })
    .on('query-response', (response: { rows?: unknown[] } | null, q: KnexQueryEvent) => {
      if (!q.__knexQueryUid || !recording.has(q.__knexQueryUid)) return;
      recorder.answered(recording.get(q.__knexQueryUid), Array.isArray(response?.rows) ? response.rows.length : null);
      recording.delete(q.__knexQueryUid);
    });

  answerProbes({
    server: running.server,
    statements: () => statements,
    recorder,
    stop: () => running.close().then(() => app.stop()).then(() => orm.close(true)),
  });
  process.send!({ cmd: 'listening', url: running.url });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
