/** Change capture's settings (src/platform/config.ts composes them; docs/subscriptions.md, "Change capture"). */
import { group, intVar, setting, strVar, urlVar } from '../env';

/** What PostgreSQL accepts as a slot name: lower-case letters, digits and underscores, at most NAMEDATALEN - 1. */
const SLOT_NAME = /^[a-z0-9_]{1,63}$/;

export function changes() {
  return group({
    /** How often the instance writes itself a message, through DATABASE_URL, to prove that it hears. */
    heartbeatIntervalMs: intVar('LISTENER_HEARTBEAT_INTERVAL_MS', 5000, 50, 600000),
    /** How long a committed heartbeat may take to come back before the instance counts as not hearing. */
    heartbeatTimeoutMs: intVar('LISTENER_HEARTBEAT_TIMEOUT_MS', 2000, 10, 600000),
    /**
     * The bus (Redis Streams) one elected decoder per database publishes to and every instance reads from; null: this
     * instance decodes for itself, over a temporary slot of its own, and dispatches in process.
     */
    busUrl: urlVar('CHANGE_BUS_URL', null, ['redis:', 'rediss:']),
    /** Prefix of the bus's keys, so that deployments (or test runs) can share one Redis. */
    busKeyPrefix: strVar('CHANGE_BUS_KEY_PREFIX', 'tender'),
    /**
     * Entries the stream keeps (about: trimmed in whole nodes); a reader further behind than that gets RESYNC. At least
     * twice what the decoder appends at once (500 transactions), or a reader that keeps up could be trimmed under.
     */
    busMaxLength: intVar('CHANGE_BUS_MAX_LENGTH', 100000, 1000, 100000000),
    /**
     * The permanent logical slot the elected decoder streams from (bus only); null: `tender_` and the database's name,
     * made unique by a hash of it (slot names are the server's, not the database's).
     */
    slotName: setting<string | null>('CHANGE_SLOT_NAME', null, (raw, refused) => (SLOT_NAME.test(raw) ? raw
      : refused(`must be 1 to 63 lower-case letters, digits or underscores (a PostgreSQL slot name), got "${raw}"`))),
    /**
     * The decoder's lease on the bus: renewed every fourth of it; a holder that stops renewing (dead, frozen, cut off)
     * loses the slot to another instance once it runs out, its WAL sender ended.
     */
    leaseMs: intVar('CHANGE_DECODER_LEASE_MS', 4000, 400, 600000),
    /** WAL the slot holds back past which the decoder logs a warning at each measure (and the gauge shows it). */
    slotWarnBytes: intVar('CHANGE_SLOT_WARN_BYTES', 1024 * 1024 * 1024, 0, Number.MAX_SAFE_INTEGER),
  });
}
