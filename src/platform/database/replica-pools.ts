import { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { ormConfig, type DataModel } from './orm-config';
import type { Config } from '../config';
import type { PoolRole } from './limits';
import { WRITES_CHANNEL } from '../events/change-event';
import { describeDatabase, describeError } from './describe';
import { probePool, type ProbePool } from './pools';
import { findSessionSettings } from './session-settings';

/** The primary's request pool: with replicas, every commit of a caller tells the instances (src/platform/database/replicas.ts). */
export const primaryRole = (config: Config): PoolRole => ({ primary: true, writesChannel: config.replicas.urls.length ? WRITES_CHANNEL : null });

/** A replica's request pool: nothing committed there is a write. */
const REPLICA_ROLE: PoolRole = { primary: false, writesChannel: null };

/** A read replica as src/platform/database/replicas.ts uses it. */
export interface ReplicaEndpoint {
  url: string;
  /** A small pool of its own for the polls, never queued behind requests. */
  probes: ProbePool;
  /** The replica's request pool; null until the replica could be asked how to connect (open). */
  orm: MikroORM | null;
  /** Opens `orm` if it is not open yet: finds where its server settings go, as for the primary. */
  open(): Promise<MikroORM>;
}

/**
 * The replicas of DATABASE_REPLICA_URLS, each with a request pool bounded like the primary's and a probe pool of
 * one connection for the router's polls. None is waited for: a replica down at start gets its request pool at the
 * first poll that reaches it (its server settings found then, as the primary's), and is skipped until then
 * (src/platform/database/replicas.ts).
 */
export async function openReplicas(config: Config, model: DataModel, log?: Logger): Promise<ReplicaEndpoint[]> {
  return Promise.all(config.replicas.urls.map(async (url) => {
    let opening: Promise<MikroORM> | null = null;
    const endpoint: ReplicaEndpoint = {
      url,
      // A poll must not outlive the next one: the router's view of a replica is at most a poll old.
      probes: probePool(url, Math.min(config.readinessTimeoutMs, config.replicas.pollMs), 1),
      orm: null,
      open() {
        opening ??= (async () => {
          const sessionSettings = await findSessionSettings(url, config.database, log);
          endpoint.orm = await MikroORM.init(ormConfig(model, url, { connect: false, ensureDatabase: false }, config.database, sessionSettings, REPLICA_ROLE));
          return endpoint.orm;
        })().catch((err) => {
          opening = null;
          throw err;
        });
        return opening;
      },
    };
    await endpoint.open().catch((err) => {
      log?.warn({ replica: describeDatabase(url), error: describeError(err) }, 'replica not reachable at start: skipped until it answers');
    });
    return endpoint;
  }));
}

/** Closes what openReplicas opened. */
export async function closeReplicas(replicas: ReplicaEndpoint[] = []): Promise<void> {
  await Promise.all(replicas.map(async (r) => {
    await r.orm?.close(true);
    await r.probes.end();
  }));
}
