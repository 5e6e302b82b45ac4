import { isUuid } from '../database/uuid';

/**
 * The channel the database's change triggers notify on (src/migrations/Migration20261230000000_change_events.ts);
 * notifications are per database, so instances on one database share it and others never see it.
 */
export const CHANGE_CHANNEL = 'tender_changes';

/**
 * The channel of authorization changes (src/migrations/Migration20270105000000_caller_changes.ts): a user's id,
 * or `*` for every user, whose caller the instances must forget (src/platform/auth/caller-cache.ts).
 */
export const CALLER_CHANNEL = 'tender_callers';

/**
 * The channel of committed writes, `<user id> <lsn>`, sent by the instance that served them (src/platform/database/replicas.ts):
 * every instance holds that caller's reads to that position.
 */
export const WRITES_CHANNEL = 'tender_writes';

/**
 * The webhook outbox's wake-up call (src/migrations/Migration20270301000000_webhooks.ts): deliveries were queued.
 * Empty payload; the delivery loops also poll, so a notification lost only delays.
 */
export const WEBHOOK_CHANNEL = 'tender_webhooks';

/**
 * What a message reports: a project (its row, managers), a trade of it, a template or slice, an invited contractor's
 * document, a version (an answer) of a document. The last three are ours, never the database's: notices about what
 * the instance hears (docs/subscriptions.md, "In band"): `interrupted`, it hears no change for now; `resumed`, it
 * hears again and missed nothing; `resync`, changes may have been missed.
 */
export const CHANGE_KINDS = ['project', 'trade', 'template', 'document', 'version', 'interrupted', 'resumed', 'resync'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

/** The kinds that are notices about the instance's hearing, not changes of the database. */
export const NOTICE_KINDS: ReadonlySet<ChangeKind> = new Set<ChangeKind>(['interrupted', 'resumed', 'resync']);

/** One notification, as the triggers send it: ids only (lowercase UUIDs). */
export interface ChangeEvent {
  kind: ChangeKind;
  organizationId: string;
  projectId: string;
  /** The template or slice, for template, document and version events. */
  templateId: string | null;
  /** The template itself, or a slice's main template. */
  mainTemplateId: string | null;
  /** The document, for document and version events. */
  documentId: string | null;
}

const DATABASE_KINDS = new Set<string>(CHANGE_KINDS.filter((k) => !NOTICE_KINDS.has(k)));

const id = (value: unknown): string | null => (isUuid(value) ? value.toLowerCase() : null);

/**
 * Reads a notification's payload; null for anything that is not one of the triggers' (another client may
 * write a message with the prefix): such a payload is dropped, never trusted.
 */
export function parseChangeEvent(payload: string | undefined): ChangeEvent | null {
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(payload ?? '') as Record<string, unknown>;
  } catch {
    return null;
  }
  if (!raw || typeof raw !== 'object' || typeof raw.kind !== 'string' || !DATABASE_KINDS.has(raw.kind)) return null;
  const event: ChangeEvent = {
    kind: raw.kind as ChangeKind,
    organizationId: id(raw.organization)!,
    projectId: id(raw.project)!,
    templateId: id(raw.template),
    mainTemplateId: id(raw.main),
    documentId: id(raw.document),
  };
  if (!event.organizationId || !event.projectId) return null;
  return event;
}
