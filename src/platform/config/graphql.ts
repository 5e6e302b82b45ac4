/** GraphQL's settings: introspection, its turns and a caller's share, the trusted documents (src/platform/config.ts composes them). */
import { boolVar, group, intVar, oneOfVar, refuse, setting, strVar } from '../env';

export function graphql(production: boolean, parallelism: number) {
  return group({
    introspection: boolVar('GRAPHQL_INTROSPECTION', !production),
    landingPage: boolVar('GRAPHQL_LANDING_PAGE', !production),
    /** Operations executed at once by this instance; more wait in turn (docs/faults.md, "Concurrent operations"). */
    maxConcurrentOperations: intVar('GRAPHQL_MAX_CONCURRENT_OPERATIONS', parallelism, 1, 10000),
    /** How long an operation waits for its turn before 503 + Retry-After. */
    queueTimeoutMs: intVar('GRAPHQL_QUEUE_TIMEOUT_MS', 900, 50, 600000),
    perCaller: intVar('GRAPHQL_MAX_CONCURRENT_OPERATIONS_PER_CALLER', null, 1, 10000),
    queueLengthPerCaller: intVar('GRAPHQL_QUEUE_LENGTH_PER_CALLER', 8, 0, 100000),
    /** The front end's trusted documents and whether arbitrary ones run (docs/trusted-documents.md). */
    trustedDocuments: group({
      /** GRAPHQL_TRUSTED_DOCUMENTS: the manifest's path, read at start (trusted-documents.ts, `readTrustedDocuments`). */
      file: strVar('GRAPHQL_TRUSTED_DOCUMENTS', null),
      mode: oneOfVar('GRAPHQL_TRUSTED_DOCUMENTS_MODE', null, ['off', 'allow', 'only']),
      /** Callers (emails, lowercase) who may send arbitrary documents in `only` mode. */
      arbitraryAllowed: setting<string[]>('GRAPHQL_ARBITRARY_DOCUMENTS_USERS', [], (raw) => raw.split(',').map((u) => u.trim().toLowerCase()).filter(Boolean)),
    }).transform(({ file, mode, arbitraryAllowed }, ctx) => {
      // A manifest named: `allow` by default; `only` without one could run nothing.
      const chosen = mode ?? (file ? 'allow' : 'off');
      if (chosen !== 'off' && !file) return refuse(ctx, `GRAPHQL_TRUSTED_DOCUMENTS_MODE=${chosen} needs GRAPHQL_TRUSTED_DOCUMENTS, the manifest's path`);
      return {
        file,
        /** `off`, `allow` or `only` (graphql/trusted-documents.ts); with a manifest named, `allow` by default. */
        mode: chosen,
        arbitraryAllowed,
      };
    }),
  }).transform(({ perCaller, ...read }) => ({
    ...read,
    /**
     * One caller's share of the queries' turns (its mutations': half the writes'), and of their queues; one more is
     * refused with 429. By default half the turns: a caller who floods leaves the other half to everyone else at once.
     */
    maxConcurrentOperationsPerCaller: perCaller ?? Math.max(1, Math.floor(read.maxConcurrentOperations / 2)),
  }));
}
