import type { MikroORM } from '@mikro-orm/postgresql';
import { CLOSE } from '../../platform/errors/websocket';
import type { Logger } from 'pino';
import type { Config } from '../../platform/config';
import { CHANGE_KINDS, NOTICE_KINDS, type ChangeEvent, type ChangeKind } from '../../platform/events/change-event';
import type { Metrics } from '../../platform/metrics';
import type { Caller } from '../../platform/auth/caller';
import { loadCallers } from '../../platform/auth/caller.service';
import type { ServiceContext } from '../../platform/service-context';
import { projectsForResync, type Watch } from './subscription.service';
import { createContext, type GraphQLContext } from '../context';
import { templateOf } from '../templates/template.payloads';
import { UpdateQueue } from './queue';
import { Notices, type NoticeTarget } from './notices';
import type { Admission } from '../../platform/http/admission';
import { inSpan } from '../../platform/telemetry/tracing';

/** The subscription fields of the schema. */
export type SubscriptionField = 'projectChanged' | 'templateChanged';

/** What `projectChanged` resolves from; `project` is a field resolver over the update's loaders. */
export interface ProjectChangeRoot {
  projectId: string;
  changes: ChangeKind[];
  templateIds: string[];
  documentIds: string[];
}

/** What `templateChanged` resolves from; `template` is a field resolver over the update's loaders. */
export interface TemplateChangeRoot {
  templateId: string;
  projectId: string;
  changes: ChangeKind[];
  documentIds: string[];
}

/**
 * One update for one subscriber: the change, and the context its payload resolves in, shared by every subscriber
 * of the same group for this delivery (src/modules/changes/websocket.ts executes it).
 */
export interface Update {
  change: ProjectChangeRoot | TemplateChangeRoot;
  context: GraphQLContext;
}

/** A WebSocket connection as the feed sees it. */
export interface SubscriberConnection {
  /** The caller as of the last check; every delivery loads it again. */
  caller: Caller;
  /** Ends the connection: the caller may no longer use the API. */
  close(code: number, reason: string): void;
}

interface Subscriber extends NoticeTarget {
  connection: SubscriberConnection;
  field: SubscriptionField;
  watch: Watch;
  queue: UpdateQueue<Update>;
}

/** A template's (or slice's) share of a project's pending changes. */
interface PendingTemplate {
  main: string;
  kinds: Set<ChangeKind>;
  documents: Set<string>;
}

/** What changed in one project during the current window. */
interface PendingProject {
  organizationId: string;
  kinds: Set<ChangeKind>;
  templates: Map<string, PendingTemplate>;
}

/**
 * Subscription payloads are resolved once per group of subscribers who see the same data, the callers
 * Administrator of the same organizations: the payload types (projects, templates and their relations) depend
 * on nothing else. The group's caller is nobody in particular, so the fields that are a caller's own on a `User`
 * (current and administered organizations) are null in payloads.
 */
const NOBODY = '00000000-0000-0000-0000-000000000000';

function groupCaller(caller: Caller): Caller {
  const organizations = [...caller.adminOrganizationIds].sort();
  return { userId: NOBODY, email: '', adminOrganizationIds: organizations, currentOrganizationId: organizations[0], adminHeadquarterIds: [] };
}

const byKindOrder = (kinds: Iterable<ChangeKind>): ChangeKind[] => CHANGE_KINDS.filter((k) => new Set(kinds).has(k));
const union = (a: readonly string[], b: readonly string[]) => [...new Set([...a, ...b])];

/**
 * `kind` added to `kinds`. The notices about hearing are a state, the newest true: hearing again (RESUMED, RESYNC)
 * ends an INTERRUPTED not read yet, and a new INTERRUPTED a RESUMED. RESYNC stays: what was missed is still missed.
 */
function addKind(kinds: Set<ChangeKind>, kind: ChangeKind): void {
  if (kind === 'interrupted') kinds.delete('resumed');
  if (kind === 'resumed' || kind === 'resync') kinds.delete('interrupted');
  kinds.add(kind);
}

/** Two updates of one subscriber for one key, still unread: one, with every change of both and the newer context. */
function mergeUpdates(older: Update, newer: Update): Update {
  const kinds = new Set(older.change.changes);
  for (const kind of newer.change.changes) addKind(kinds, kind);
  return {
    context: newer.context,
    change: {
      ...newer.change,
      changes: byKindOrder(kinds),
      documentIds: union(older.change.documentIds, newer.change.documentIds),
      ...('templateIds' in newer.change ? { templateIds: union((older.change as ProjectChangeRoot).templateIds, newer.change.templateIds) } : {}),
    },
  };
}

/** The projects of a batch a watch is about (for a template: its project), without going through the whole batch. */
function watchedIn(watch: Watch, batch: Map<string, PendingProject>): string[] {
  if (watch.kind === 'template') return batch.has(watch.projectId) ? [watch.projectId] : [];
  if (!watch.projectIds) return [...batch.keys()];
  const ids: string[] = [];
  if (watch.projectIds.size < batch.size) {
    for (const id of watch.projectIds) if (batch.has(id)) ids.push(id);
  } else {
    for (const id of batch.keys()) if (watch.projectIds.has(id)) ids.push(id);
  }
  return ids;
}

/** The update a watch of this project gets from its pending changes; null when none of them concerns it. */
function changeFor(watch: Watch, projectId: string, pending: PendingProject): ProjectChangeRoot | TemplateChangeRoot | null {
  if (watch.kind === 'projects') {
    const documents = new Set<string>();
    for (const t of pending.templates.values()) for (const d of t.documents) documents.add(d);
    return { projectId, changes: byKindOrder(pending.kinds), templateIds: [...pending.templates.keys()], documentIds: [...documents] };
  }
  // The notices concern every watch of the project.
  const kinds = new Set<ChangeKind>([...pending.kinds].filter((k) => NOTICE_KINDS.has(k)));
  const documents = new Set<string>();
  for (const [id, t] of pending.templates) {
    if (id !== watch.templateId && t.main !== watch.templateId) continue;
    for (const k of t.kinds) addKind(kinds, k);
    for (const d of t.documents) documents.add(d);
  }
  if (!kinds.size) return null;
  return { templateId: watch.templateId, projectId, changes: byKindOrder(kinds), documentIds: [...documents] };
}

/**
 * The in-process fan-out of change events to this instance's subscribers (docs/subscriptions.md):
 *
 * - Coalescing: the first event opens a window (SUBSCRIPTIONS_COALESCE_MS); every event until it closes is
 *   merged per project, so a subscriber gets at most one update per project per window, however many rows a
 *   transaction wrote. A window never closes while the previous delivery is still being prepared.
 * - Re-check at each delivery: the callers of every concerned subscriber are loaded again, in one statement;
 *   a caller who may no longer use the API has their connection closed, and a subscriber gets an update only
 *   for a project of an organization they administer now, which the services (through the loaders) must
 *   still show them.
 * - Payloads: per group of callers of the same organizations, one set of DataLoaders for the delivery, which
 *   the visibility check and every subscriber's payload share: a few statements per group, whatever the
 *   number of subscribers or of changed rows.
 */
export class ChangeFeed {
  private readonly subscribers = new Set<Subscriber>();
  private pending = new Map<string, PendingProject>();
  /** Told once the window now open is delivered (or could not be): the notices wait for theirs. */
  private pendingWaiters: Array<{ resolve(): void; reject(err: unknown): void }> = [];
  private timer: NodeJS.Timeout | null = null;
  private delivering: Promise<void> | null = null;
  private windowClosed = false;
  private stopped = false;
  private readonly notices: Notices<Subscriber>;

  constructor(private readonly orm: MikroORM, private readonly config: Config, private readonly log: Logger, private readonly metrics: Metrics,
    private readonly admission?: Admission) {
    this.notices = new Notices(() => this.subscribers.values(), (kind, targets) => this.announce(kind, targets), log);
  }

  /** Registers a subscriber; its updates are read from the returned queue, whose end unregisters it. */
  subscribe(connection: SubscriberConnection, field: SubscriptionField, watch: Watch): UpdateQueue<Update> {
    const subscriber: Subscriber = {
      connection,
      field,
      watch,
      interruption: null,
      queue: new UpdateQueue<Update>(mergeUpdates, () => {
        this.subscribers.delete(subscriber);
        this.metrics.subscriptionsActive.dec({ subscription: field });
      }),
    };
    this.subscribers.add(subscriber);
    this.metrics.subscriptionsActive.inc({ subscription: field });
    this.notices.subscribed(subscriber);
    return subscriber.queue;
  }

  /** Whether the instance hears the database's changes (src/platform/events/change-listener.ts): subscribers are told in band. */
  setHearing(hearing: boolean): void {
    this.notices.setHearing(hearing);
  }

  /** Changes may have been missed (a new slot, a stream that does not continue): every subscriber gets RESYNC once it hears. */
  gap(): void {
    this.notices.gap();
  }

  /** A change event from the listener. */
  add(event: ChangeEvent): void {
    this.metrics.changeEvents.inc({ kind: event.kind });
    // Nobody to tell: nothing to prepare.
    if (this.stopped || this.subscribers.size === 0) return;
    let project = this.pending.get(event.projectId);
    if (!project) {
      project = { organizationId: event.organizationId, kinds: new Set(), templates: new Map() };
      this.pending.set(event.projectId, project);
    }
    addKind(project.kinds, event.kind);
    if (event.templateId) {
      let template = project.templates.get(event.templateId);
      if (!template) {
        template = { main: event.mainTemplateId ?? event.templateId, kinds: new Set(), documents: new Set() };
        project.templates.set(event.templateId, template);
      }
      addKind(template.kinds, event.kind);
      if (event.documentId) template.documents.add(event.documentId);
    }
    this.timer ??= setTimeout(() => this.closeWindow(), this.config.subscriptions.coalesceMs);
  }

  /**
   * A notice (Notices): an update of kind `kind`, with its fresh payload, for every project the targets watch; resolves
   * once delivered. One statement finds the projects of the "every project" subscribers.
   */
  private async announce(kind: ChangeKind, targets: Subscriber[]): Promise<void> {
    if (this.stopped || !targets.length) return;
    const organizations = new Set<string>();
    const projects = new Set<string>();
    for (const s of targets) {
      if (s.watch.kind === 'template') projects.add(s.watch.projectId);
      else if (s.watch.projectIds) for (const id of s.watch.projectIds) projects.add(id);
      else for (const id of s.connection.caller.adminOrganizationIds) organizations.add(id);
    }
    const rows = await projectsForResync(this.orm.em.fork(), [...organizations], [...projects]);
    if (this.stopped || !rows.length || !this.subscribers.size) return;
    const delivered = new Promise<void>((resolve, reject) => this.pendingWaiters.push({ resolve, reject }));
    for (const row of rows) {
      this.add({ kind, organizationId: row.organizationId, projectId: row.id, templateId: null, mainTemplateId: null, documentId: null });
    }
    await delivered;
  }

  /** Stops delivering; the subscribers' queues end with their connections (closed before). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.notices.stop();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.delivering;
    for (const w of this.pendingWaiters.splice(0)) w.resolve();
    for (const s of [...this.subscribers]) await s.queue.return();
  }

  private closeWindow(): void {
    this.timer = null;
    if (this.delivering) {
      this.windowClosed = true;
      return;
    }
    const batch = this.pending;
    const waiters = this.pendingWaiters;
    this.pending = new Map();
    this.pendingWaiters = [];
    // A batch is prepared in a turn of the deliveries' class (src/platform/http/admission.ts): it waits, never refused.
    // A trace of its own per delivery (docs/tracing.md): the callers' re-check and the payloads' statements.
    const deliver = () => inSpan('subscription delivery', { 'subscription.projects': batch.size }, () => this.deliver(batch));
    const prepared = this.admission ? this.admission.run('delivery', deliver) : deliver();
    this.delivering = prepared
      .then(() => {
        for (const w of waiters) w.resolve();
      }, (err) => {
        // Its subscribers would miss these changes without a word: they are owed RESYNC, retried until delivered.
        this.log.warn({ err, projects: batch.size }, 'subscriptions: updates could not be prepared; their subscribers get RESYNC instead');
        for (const w of waiters) w.reject(err);
        if (![...batch.values()].every((p) => [...p.kinds].every((k) => NOTICE_KINDS.has(k)))) this.notices.gap();
      })
      .finally(() => {
        this.delivering = null;
        if (this.windowClosed) {
          this.windowClosed = false;
          this.closeWindow();
        }
      });
  }

  private async deliver(batch: Map<string, PendingProject>): Promise<void> {
    if (this.stopped || batch.size === 0) return;
    const concerned = [...this.subscribers].map((subscriber) => ({ subscriber, projectIds: subscriber.queue.done ? [] : watchedIn(subscriber.watch, batch) }))
      .filter((c) => c.projectIds.length > 0);
    if (!concerned.length) return;

    const callers = await loadCallers(this.orm.em.fork(), concerned.map((c) => c.subscriber.connection.caller.userId));
    const groups = new Map<string, GraphQLContext>();
    // One change object per group, project and watch: subscribers who asked the same get the same result (websocket.ts).
    const shared = new Map<string, ProjectChangeRoot | TemplateChangeRoot | null>();
    const planned: Array<{ subscriber: Subscriber; context: GraphQLContext; key: string; change: ProjectChangeRoot | TemplateChangeRoot }> = [];
    for (const { subscriber, projectIds } of concerned) {
      const caller = callers.get(subscriber.connection.caller.userId);
      if (!caller || caller instanceof Error) {
        this.metrics.subscriptionRefusals.inc({ reason: 'forbidden' });
        subscriber.connection.close(CLOSE.forbidden, caller?.message ?? 'Forbidden');
        continue;
      }
      subscriber.connection.caller = caller;
      const scope = groupCaller(caller);
      const groupKey = scope.adminOrganizationIds.join(',');
      for (const projectId of projectIds) {
        const pending = batch.get(projectId)!;
        if (!caller.adminOrganizationIds.includes(pending.organizationId)) continue;
        const changeKey = `${groupKey}|${projectId}|${subscriber.watch.kind === 'template' ? subscriber.watch.templateId : ''}`;
        if (!shared.has(changeKey)) shared.set(changeKey, changeFor(subscriber.watch, projectId, pending));
        const change = shared.get(changeKey);
        if (!change) continue;
        let context = groups.get(groupKey);
        if (!context) {
          const sc: ServiceContext = { em: this.orm.em.fork(), caller: scope, config: this.config };
          context = createContext(sc);
          groups.set(groupKey, context);
        }
        planned.push({ subscriber, context, key: 'templateId' in change ? change.templateId : projectId, change });
      }
    }
    // Through the group's loaders: the payloads reuse what these load.
    const checked = await Promise.all(planned.map(async ({ subscriber, context, change }) => {
      const visible = (await context.loaders.project.load(change.projectId)) !== null;
      const gone = visible && subscriber.watch.kind === 'template'
        && (await templateOf(context.loaders, change.projectId, subscriber.watch.templateId)) === null;
      return { visible, gone };
    }));
    planned.forEach(({ subscriber, context, key, change }, i) => {
      if (!checked[i].visible || subscriber.queue.done) return;
      subscriber.queue.push(key, { change, context }, checked[i].gone);
      this.metrics.subscriptionUpdates.inc({ subscription: subscriber.field });
    });
  }
}
