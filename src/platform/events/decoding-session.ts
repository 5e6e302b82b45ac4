import type { ClientConfig, Client } from 'pg';
import { LogicalReplicationService, PgoutputPlugin, type Pgoutput } from 'pg-logical-replication';
import type { Logger } from 'pino';
import { describeError } from '../database/describe';
import { backoffMs } from '../retry';
import { chunkPosition, type BusPublisher, type DecodedChunk } from './change-bus';
import { CHANGE_PUBLICATION, lsnBefore, normalLsn } from './logical-decoding';
import type { SlotWatch } from './slot-watch';

/** Messages per bus entry: a transaction writing more is published in parts (one position each). */
const CHUNK_MESSAGES = 1000;
/** Chunks per publication. */
const BATCH_CHUNKS = 500;
/** Decoded chunks kept while the bus does not take them; past it the session gives the slot up (nothing confirmed is lost). */
const MAX_QUEUED_CHUNKS = 100_000;
/** How often the session tells the server how far it got (and that it is alive). */
const STATUS_EVERY_MS = 1000;

export type SessionPhase = 'connecting' | 'making the slot' | 'streaming';

type Queued = { chunk: DecodedChunk; endLsn: string };

export interface SessionOptions {
  url: string;
  connectTimeoutMs: number;
  log: Logger;
  /** The slot, and whether it is this session's own (TEMPORARY: dropped with the connection). */
  slot: { name: string; temporary: boolean };
  /** Its connections' `application_name` (decoderName): a WAL sender of another name is never ended. */
  applicationName: string;
  bus: BusPublisher;
  /** Fences this session's publications (the bus's lease epoch; in process: any). */
  epoch: number;
  /**
   * How long a commit waits for others to be published with it (a bus over the network: every reader makes a round
   * trip per publication; in process, 0).
   */
  lingerMs: number;
  watch: SlotWatch;
  onPhase(phase: SessionPhase): void;
}

/**
 * One replication connection streaming one slot (pgoutput, messages only), and the publication of what it decodes:
 * each committed transaction's messages go to the bus in commit order, and the slot is confirmed up to a commit only
 * once the bus took it, so that a decoder that takes the slot over (or this one, reconnected) starts where nothing is
 * lost. A slot that had to be made (absent, or invalidated past max_slot_wal_keep_size) decoded nothing before: a gap
 * marker goes first. `ended` settles with why the session ended, whatever ended it.
 */
export class DecodingSession {
  readonly ended: Promise<Error>;
  private readonly service: LogicalReplicationService;
  private end!: (err: Error) => void;
  private over = false;
  /** The server process of this connection (its WAL sender), once known: what a given-up wait is cancelled through. */
  private senderPid: number | null = null;
  private phase: SessionPhase = 'connecting';
  /** The transaction being received: its commit position and messages so far. */
  private open: { position: string; committedAt: number; messages: Array<[string, string]>; parts: number } | null = null;
  /** What the next chunk follows (DecodedChunk.after): the last one queued, or where this session took the stream up. */
  private after = '';
  private queue: Queued[] = [];
  private flushing = false;
  /** The slot's confirmed position as this session knows it: the end of the last commit the bus took. */
  private confirmed: string | null = null;
  /** The server's position at its last keepalive while nothing was pending: confirmable as is. */
  private idleAt: string | null = null;
  private statusTimer: NodeJS.Timeout | null = null;
  /** Woken by the server's next keepalive (roundTrip). */
  private keepaliveWaiters: Array<() => void> = [];
  /** The end of a wait on the server (making the slot) given up with the session: stop() waits for it. */
  private ending: Promise<void> = Promise.resolve();

  constructor(private readonly options: SessionOptions) {
    this.ended = new Promise((resolve) => { this.end = resolve; });
    const config: ClientConfig = {
      connectionString: options.url,
      connectionTimeoutMillis: options.connectTimeoutMs,
      keepAlive: true,
      // Without it the OS default applies (2 h on Linux) before the first probe: a server that died silently would
      // keep the slot's decoding away that long. 10 s plus the OS's probes is a bound.
      keepAliveInitialDelayMillis: 10_000,
      application_name: options.applicationName,
    };
    // Confirmed by hand, once published: see status().
    this.service = new LogicalReplicationService(config, { acknowledge: { auto: false, timeoutSeconds: 0 } });
  }

  /** Connects, prepares the slot, streams; resolves once streaming began (or the session ended before). */
  async start(): Promise<void> {
    const { service } = this;
    const started = new Promise<void>((resolve) => service.once('start', () => resolve()));
    service.on('data', (_lsn: string, message: Pgoutput.Message) => this.received(message));
    service.on('heartbeat', (lsn: string, _ts: number, shouldRespond: boolean) => {
      if (!this.open && this.queue.length === 0 && !this.flushing) this.idleAt = normalLsn(lsn);
      if (shouldRespond) this.status(true);
      for (const wake of this.keepaliveWaiters.splice(0)) wake();
    });
    service.on('error', (err: Error) => this.finish(err));
    const plugin = new SlotPlugin(this);
    void service.subscribe(plugin, this.options.slot.name)
      .then(() => this.finish(new Error('the replication connection ended')), (err: Error) => this.finish(err));
    await Promise.race([started, this.ended]);
    if (this.over) return;
    this.setPhase('streaming');
    this.statusTimer = setInterval(() => this.status(), STATUS_EVERY_MS);
    this.statusTimer.unref();
  }

  /**
   * A status update asking the server for a reply, and that reply (at most `ms`), then what it brought published: the
   * reply comes after every message sent before it, so a heartbeat merely left unread by a busy event loop is read now.
   */
  async roundTrip(ms: number): Promise<void> {
    if (this.over || this.phase !== 'streaming') return;
    const until = Date.now() + ms;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise<void>((resolve) => {
        this.keepaliveWaiters.push(resolve);
        void this.service.acknowledge(lsnBefore(this.confirmed ?? '00000000/00000001'), true).catch(() => resolve());
      }),
      new Promise<void>((resolve) => { timer = setTimeout(resolve, ms); }),
    ]);
    clearTimeout(timer);
    while ((this.queue.length || this.flushing) && !this.over && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 5));
  }

  /** Ends the session; a wait the server is still in (making the slot) is cancelled there, never left to stack up. */
  async stop(reason: string): Promise<void> {
    this.finish(new Error(reason));
    await this.ending;
    await this.service.stop().catch(() => undefined);
  }

  /** Sets up the slot on the replication connection, before START_REPLICATION (SlotPlugin). */
  async prepare(client: Client): Promise<void> {
    const { slot, watch, log, bus, epoch, applicationName } = this.options;
    const [{ pid, db }] = (await client.query<{ pid: number; db: string }>('select pg_backend_pid() as pid, current_database() as db')).rows;
    this.senderPid = pid;
    if (this.over) throw new Error('stopped');
    let existing = await slotRow(client, slot.name);
    if (existing && existing.database !== db) {
      throw new Error(`the replication slot ${slot.name} belongs to database ${existing.database}: set CHANGE_SLOT_NAME to a name of this database's own`);
    }
    if (existing?.active_pid) {
      // Another bus's decoder (instances of one database configured apart): ending it would confirm the slot past
      // what one of the two buses has, and lose it for its readers. Wait for it to stop.
      if (existing.active_name !== applicationName) {
        throw new Error(`the slot ${slot.name} is streamed by another decoder ("${existing.active_name}"): the instances of this database do not share one bus (CHANGE_BUS_URL, CHANGE_BUS_KEY_PREFIX); waiting for it to stop`);
      }
      // This instance holds the lease: whoever streams the slot is a holder that stopped renewing it (dead, frozen, cut off).
      log.warn({ slot: slot.name, pid: existing.active_pid }, 'change events: the slot is held by a decoder whose lease ran out: ending its WAL sender');
      await watch.endSender(existing.active_pid, applicationName);
      await watch.untilInactive(slot.name);
      // As it is now: the old holder may have confirmed more meanwhile.
      existing = await slotRow(client, slot.name);
      if (existing?.active_pid) throw new Error(`the slot ${slot.name} is still streamed by process ${existing.active_pid}`);
    }
    if (existing && existing.wal_status !== 'lost') {
      this.confirmed = normalLsn(existing.confirmed ?? '0/0');
      // Where the stream stands: the last commit published, unless the slot was confirmed past it (nothing of ours in
      // between: a commit is confirmed only once published). Unknown (the bus lost it): the slot's position.
      const published = await bus.publishedEnd().catch(() => null);
      this.after = published !== null && published <= this.confirmed ? published : this.confirmed;
      return;
    }
    const gap = existing ? 'the replication slot was invalidated (max_slot_wal_keep_size) and made anew: changes before it were not decoded'
      : slot.temporary ? 'this instance decodes on a slot of its own, made at its connection: changes before it were not decoded'
        : 'the replication slot was made: changes before it were not decoded';
    // Told before the slot is made: a session that ends after making it, and before publishing anything, leaves the
    // next one a slot that looks whole. A marker for a slot that is then not made costs a RESYNC, never a loss.
    if (!(await bus.markGap(epoch, gap))) throw new Error('fenced: another instance took the slot over');
    if (existing) {
      log.warn({ slot: slot.name }, 'change events: the slot was invalidated (it held back more WAL than max_slot_wal_keep_size allows): making it anew; every subscriber gets RESYNC');
      await client.query(`DROP_REPLICATION_SLOT "${slot.name}"`);
    }
    this.setPhase('making the slot');
    const made = await watch.whileWaiting(pid, slot.name, () => client.query<{ consistent_point: string }>(
      `CREATE_REPLICATION_SLOT "${slot.name}" ${slot.temporary ? 'TEMPORARY ' : ''}LOGICAL pgoutput`));
    this.confirmed = normalLsn(made.rows[0].consistent_point);
    this.after = this.confirmed;
    if (!slot.temporary) log.info({ slot: slot.name }, 'change events: the replication slot was made');
    this.setPhase('connecting');
  }

  private received(message: Pgoutput.Message): void {
    if (this.over) return;
    if (message.tag === 'begin') {
      this.idleAt = null;
      this.open = { position: normalLsn(message.commitLsn ?? '0/0'), committedAt: Number(message.commitTime) / 1000, messages: [], parts: 0 };
      return;
    }
    if (message.tag === 'message') {
      // Every message of ours is transactional; another client's non-transactional one is no change of ours.
      if (!message.transactional || !this.open) return;
      this.open.messages.push([message.prefix, Buffer.from(message.content).toString('utf8')]);
      if (this.open.messages.length >= CHUNK_MESSAGES) this.cut(null);
      return;
    }
    if (message.tag === 'commit' && this.open) {
      const { open } = this;
      this.open = null;
      // A transaction with nothing of ours (PostgreSQL before 15 sends every one): nothing to publish; confirmed as is
      // once what came before it is published.
      if (open.parts === 0 && open.messages.length === 0) {
        if (this.queue.length === 0 && !this.flushing && message.commitEndLsn) this.confirmed = normalLsn(message.commitEndLsn);
        return;
      }
      this.open = open;
      this.cut(message.commitEndLsn ?? null);
      this.open = null;
      this.flush();
    }
  }

  /** The open transaction's messages so far as one chunk; `endLsn` once it committed (what confirming it takes). */
  private cut(endLsn: string | null): void {
    const open = this.open!;
    if (open.messages.length === 0 && endLsn === null) return;
    const position = chunkPosition(open.position, open.parts++);
    const end = endLsn === null ? null : normalLsn(endLsn);
    this.queue.push({ chunk: { position, after: this.after, end, committedAt: open.committedAt, messages: open.messages }, endLsn: end ?? '' });
    this.after = end ?? position;
    open.messages = [];
    if (this.queue.length > MAX_QUEUED_CHUNKS) {
      this.finish(new Error(`the bus took none of the last ${MAX_QUEUED_CHUNKS} decoded chunks: giving the slot up (decoding resumes from its confirmed position)`));
    }
  }

  /** Publishes what is queued, in order, one publication at a time; retries while the bus fails. */
  private flush(): void {
    if (this.flushing || this.over) return;
    this.flushing = true;
    void (async () => {
      if (this.options.lingerMs > 0) await new Promise((resolve) => setTimeout(resolve, this.options.lingerMs));
      let failures = 0;
      while (this.queue.length && !this.over) {
        const batch = this.queue.slice(0, BATCH_CHUNKS);
        try {
          if (!(await this.options.bus.publish(this.options.epoch, batch.map((q) => q.chunk)))) {
            this.finish(new Error('fenced: another instance took the slot over'));
            break;
          }
          this.queue.splice(0, batch.length);
          failures = 0;
          const done = [...batch].reverse().find((q) => q.endLsn);
          if (done) this.confirmed = done.endLsn;
        } catch (err) {
          failures++;
          if (failures === 1) this.options.log.warn({ error: describeError(err), queued: this.queue.length }, 'change events: the bus does not take the decoded changes; retrying (nothing is confirmed to the slot meanwhile)');
          await new Promise((resolve) => setTimeout(resolve, backoffMs(failures, 100, 2000)));
        }
      }
      this.flushing = false;
      if (!this.over && this.queue.length) this.flush();
    })();
  }

  /**
   * Tells the server how far the bus has taken (the slot's confirmed position, which the WAL behind it is recycled
   * from), and that this session is alive: the end of the last commit published. Asked for a reply with nothing
   * pending, the server's own position: a server that shuts down waits for exactly that (WalSndDone). Only then: the
   * bus's readers judge continuity by commit ends (src/platform/events/change-bus.ts), and a slot confirmed past the
   * last one published would look, to a decoder that cannot ask the bus, like a gap.
   */
  private status(asked = false): void {
    if (this.over || this.phase !== 'streaming') return;
    const idle = !this.open && this.queue.length === 0 && !this.flushing;
    const position = asked && idle && this.idleAt ? this.idleAt : this.confirmed;
    if (!position) return;
    // The library reports one past the position it is given.
    void this.service.acknowledge(lsnBefore(position)).catch(() => undefined);
  }

  private setPhase(phase: SessionPhase): void {
    this.phase = phase;
    this.options.onPhase(phase);
  }

  private finish(err: Error): void {
    if (this.over) return;
    this.over = true;
    // Ended while the server waits (making the slot: it does not read the socket then, so closing it changes nothing).
    if (this.phase !== 'streaming' && this.senderPid !== null) this.ending = this.options.watch.endSender(this.senderPid, this.options.applicationName);
    for (const wake of this.keepaliveWaiters.splice(0)) wake();
    if (this.statusTimer) clearInterval(this.statusTimer);
    this.service.removeAllListeners();
    // An error of the connection being ended must find a listener (an 'error' without one is thrown).
    this.service.on('error', () => undefined);
    // A temporary slot goes with its connection.
    void this.service.stop().catch(() => undefined);
    this.end(err);
  }
}

interface SlotRow {
  active_pid: number | null;
  /** The application_name of the connection streaming it. */
  active_name: string | null;
  wal_status: string | null;
  confirmed: string | null;
  database: string;
}

/** The slot `name` as the server has it, null when it has none. */
async function slotRow(client: Client, name: string): Promise<SlotRow | null> {
  // A replication connection speaks the simple protocol only: no parameters (slot names are [a-z0-9_], checked).
  const { rows } = await client.query<{ slot: SlotRow | null }>(`select (select json_build_object('active_pid', s.active_pid,
      'active_name', (select a.application_name from pg_stat_activity a where a.pid = s.active_pid),
      'wal_status', s.wal_status, 'confirmed', s.confirmed_flush_lsn::text, 'database', s.database)
    from pg_replication_slots s where s.slot_name = '${name}') as slot`);
  return rows[0].slot;
}

/** pgoutput over the session's slot, prepared on the replication connection itself just before START_REPLICATION. */
class SlotPlugin extends PgoutputPlugin {
  constructor(private readonly session: DecodingSession) {
    super({ protoVersion: 1, publicationNames: [CHANGE_PUBLICATION], messages: true });
  }

  override async start(client: Client, slotName: string, lastLsn: string): Promise<unknown> {
    await this.session.prepare(client);
    return super.start(client, slotName, lastLsn);
  }
}
