import type { Logger } from 'pino';
import type { ChangesConfig } from '../config';
import type { Metrics } from '../metrics';
import { InProcessBus, type ChangeBus } from './change-bus';
import { ChangeListener, type ChangeListenerOptions } from './change-listener';
import { Decoder, type DecoderStatus } from './decoder';
import { decoderName, defaultSlotName, type DecodedDatabase } from './logical-decoding';
import { RedisChangeBus } from './redis-bus';

/** Who hears the changes: the listener's consumers (src/app.ts wires them). */
type ChangeConsumers = Pick<ChangeListenerOptions, 'onEvent' | 'onCallerChange' | 'onWrite' | 'onWebhooksQueued' | 'onGap' | 'onHearing'>;

export interface ChangeCaptureOptions {
  config: ChangesConfig;
  /** DATABASE_DIRECT_URL: PostgreSQL itself, where the decoder's replication connection goes. */
  directUrl: string;
  /** What the start's check found there (src/platform/events/logical-decoding.ts). */
  database: DecodedDatabase;
  connectTimeoutMs: number;
  log: Logger;
  metrics: Metrics;
  /** Writes a heartbeat message through DATABASE_URL (the request path), in a transaction of its own. */
  sendHeartbeat(channel: string, payload: string): Promise<void>;
  consumers: ChangeConsumers;
}

/** What /healthz says of change capture. */
export interface ChangeCaptureStatus {
  /** bus: one elected decoder per database, every instance reads the bus; in-process: this instance decodes for itself. */
  mode: 'bus' | 'in-process';
  hearing: boolean;
  /** Since when it does not hear (ISO time); absent while hearing. */
  deafSince?: string;
  decoder: DecoderStatus;
}

/** See lingerMs below. */
const PUBLISH_LINGER_MS = 10;

const DECODER_STATUSES: DecoderStatus[] = ['standby', 'off', 'connecting', 'making the slot', 'streaming'];

/**
 * Change capture as the app runs it (docs/subscriptions.md): a decoder, a bus and this instance's listener. Without
 * CHANGE_BUS_URL the instance decodes for itself (a temporary slot, one WAL sender) and the bus is in process; with it,
 * one decoder per database, elected over the bus's lease, streams a permanent slot and publishes to Redis Streams, and
 * every instance, the decoder's own included, reads from there. The listener, its heartbeats and its consumers are the
 * same code either way.
 */
export class ChangeCapture {
  readonly mode: ChangeCaptureStatus['mode'];
  private readonly decoder: Decoder;
  private readonly listener: ChangeListener;
  /** The decoder was reconnected for a missed heartbeat, and nothing was heard since. */
  private reconnectedDeaf = false;

  private constructor(private readonly options: ChangeCaptureOptions, private readonly bus: ChangeBus, redis: RedisChangeBus | null) {
    const { config, log, metrics, consumers } = options;
    this.mode = redis ? 'bus' : 'in-process';
    const slotName = config.slotName ?? defaultSlotName(options.database.database);
    this.decoder = new Decoder({
      url: options.directUrl,
      connectTimeoutMs: options.connectTimeoutMs,
      log,
      bus,
      election: redis ? { lease: redis, slotName, leaseMs: config.leaseMs } : null,
      warnBytes: config.slotWarnBytes,
      // Every reader of the bus makes a round trip per publication: a commit waits 10 ms for others to go with it (the
      // subscribers' coalescing window is 250 ms). One append wakes every blocked reader at once, so the instances
      // still hear it together, as read-your-writes across instances expects (src/platform/database/replicas.ts).
      lingerMs: redis ? PUBLISH_LINGER_MS : 0,
      applicationName: decoderName(redis?.key ?? null),
      onStatus: (status) => {
        for (const s of DECODER_STATUSES) metrics.changeDecoderStatus.set({ status: s }, s === status ? 1 : 0);
        if (!redis) metrics.changeListenerListening.set(status === 'streaming' ? 1 : 0);
        // Streaming now: a heartbeat proves it at once rather than at the next beat. Decoding for itself, an instance
        // whose decoder stops streaming hears nothing from then on.
        if (status === 'streaming') this.listener?.beatNow();
        else if (!redis) this.listener?.lost('its decoder does not stream');
      },
      onMeasure: (measure) => {
        if (!measure) {
          metrics.changeSlotRetained.reset();
          metrics.changeSlotLag.reset();
          return;
        }
        metrics.changeSlotRetained.set(measure.retainedBytes);
        metrics.changeSlotLag.set(measure.lagBytes);
      },
    });
    this.listener = new ChangeListener({
      bus,
      log,
      heartbeat: { intervalMs: config.heartbeatIntervalMs, timeoutMs: config.heartbeatTimeoutMs, send: options.sendHeartbeat },
      // In process, a heartbeat committed before the decoder's slot exists would never be decoded; a permanent slot
      // decodes it whenever its decoder comes.
      canHear: () => Boolean(redis) || this.decoder.status === 'streaming',
      ...consumers,
      onGap: (reason) => {
        metrics.changeGaps.inc();
        consumers.onGap(reason);
      },
      onHearing: (hearing) => {
        if (hearing) this.reconnectedDeaf = false;
        metrics.changeListenerHearing.set(hearing ? 1 : 0);
        consumers.onHearing?.(hearing);
      },
      onConnected: redis ? (connected) => metrics.changeListenerListening.set(connected ? 1 : 0) : undefined,
      onHeartbeatMissed: () => {
        metrics.changeListenerHeartbeatsMissed.inc();
        // A session that streams yet brings no heartbeat back may be stuck: a new one costs little (a permanent slot
        // resumes where it was confirmed; a temporary one is made anew, and its subscribers get RESYNC). Once: a new
        // session that does not bring them back either is not the cause (the requests write to another database).
        if (this.decoder.status === 'streaming' && !this.reconnectedDeaf) {
          this.reconnectedDeaf = true;
          this.decoder.reconnect('a heartbeat did not come back');
        }
      },
      onDelay: (seconds) => metrics.changeDelay.observe(seconds),
      catchUp: async () => {
        await this.decoder.roundTrip(config.heartbeatTimeoutMs);
        await bus.catchUp();
      },
    });
    log.info(redis
      ? { mode: this.mode, bus: redis.description, slot: slotName, lease_ms: config.leaseMs }
      : { mode: this.mode },
    redis
      ? 'change capture: one decoder per database, elected over the bus\'s lease, publishes to the bus; this instance reads it (and decodes when elected)'
      : 'change capture: this instance decodes for itself (a temporary slot and one WAL sender of its own) and dispatches in process; set CHANGE_BUS_URL for one decoder per database');
  }

  static async open(options: ChangeCaptureOptions): Promise<ChangeCapture> {
    const { config, database, log, connectTimeoutMs } = options;
    const redis = config.busUrl ? await RedisChangeBus.open({
      url: config.busUrl,
      key: `${config.busKeyPrefix}:changes:{${database.systemId}:${database.database}}`,
      maxLength: config.busMaxLength,
      timeoutMs: connectTimeoutMs,
      log,
    }) : null;
    return new ChangeCapture(options, redis ?? new InProcessBus(), redis);
  }

  get hearing(): boolean {
    return this.listener.hearing;
  }

  status(): ChangeCaptureStatus {
    const deafSince = this.listener.deafSinceMs;
    return {
      mode: this.mode,
      hearing: this.listener.hearing,
      ...(deafSince === null ? {} : { deafSince: new Date(deafSince).toISOString() }),
      decoder: this.decoder.status,
    };
  }

  /**
   * Starts decoding (or standing by) and listening; resolves once the instance hears, or after a bound: it then serves
   * while deaf, and says so (a decoder waiting for a long transaction must not keep the fleet from starting).
   */
  async start(): Promise<void> {
    this.decoder.start();
    await this.listener.start(3 * this.options.connectTimeoutMs);
  }

  /** The primary changed (src/platform/database/primary-watch.ts): a session on the old server decodes nothing new. */
  reconnect(reason: string): void {
    this.decoder.reconnect(reason);
  }

  /**
   * The listener first (a decoder that stops is no news to it), then the decoder (its lease released: another instance
   * takes the slot within a second), then the bus.
   */
  async stop(): Promise<void> {
    await this.listener.stop();
    await this.decoder.stop();
    await this.bus.stop();
  }
}
