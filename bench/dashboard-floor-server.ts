import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { loadConfig } from '../src/platform/config';
import { startupParameters } from '../src/platform/database/limits';
import { amountOf, fromCents } from '../src/platform/money/money';
import { formatTimestamp, parseTimestamp } from '../src/platform/values/time';
import type { RecordedStatement } from './server-process';
import { answerProbes, StatementRecorder } from './probe';

/**
 * The same-SQL floor of the front end's dashboard (issue 34; bench/dashboard.bench.ts): a plain `node:http` server
 * and a `pg` pool, in a process of its own with the service's probe (bench/probe.ts), that answers the one document
 * examples/graphql/dashboard.graphql with the very bytes the service answers, by running the very statements the
 * service runs for it, with plain loops and Maps by parent id: no framework, no GraphQL, no ORM, no DataLoader.
 *
 * It authenticates nothing: its caller (user, current organization, Administrator organizations) is given by the
 * benchmark, as the service's caller cache holds it between requests. It answers POST /graphql with that one
 * document and those variables, and a 400 for anything else.
 *
 * The statements are the service's own: the benchmark records one request of the service (bench/dashboard-server.ts)
 * and hands the statements over (`configure`). Each is recognized by its kind (the floor knows which rows of which
 * statement make which part of the answer) and made a template: the caller's ids, from the caller, and the page's
 * project ids, which the floor reads from its own run of the page's statement once (they must be those the
 * service's statements carry, in their order), are taken out of the text; any other id left in a text refuses the
 * configuration (the floor would not compute it). At each request the floor fills the project ids in from the
 * page's rows, as the service's loaders do.
 *
 * The overlap is the service's: the caller's user then organizations (with their members), beside the count and the
 * page sent at once; then, once the page has answered, the eight statements of the page's projects at once
 * (statistics, managers, trades, templates, and what the service reads ahead with the templates: their stats,
 * documents, versions and contractors), each on a connection of the pool (DATABASE_POOL_SIZE, 10 by default, with
 * the service's startup settings: timeouts, jit off).
 *
 * The answer is built as plain objects in the document's field order and serialized once; `extensions.cost.actual`
 * is the number of values placed (a shared object, a trade or a contractor, counts each time it appears), counted
 * while building; `requested` and `limit` are constants given by the benchmark from the service's answer.
 */

/** The statements the service runs for the dashboard, by what each starts with (its white space made single spaces). */
const KINDS = {
  count: /^select count\(\*\) as n from project p where /,
  user: /^select u\.id, u\.first_name, .* from app_user u where u\.id = /,
  organizations: /^select o\.id, o\.name, .* from organization o where /,
  page: /^select p\.id, p\.legacy_id, .* from project p where .* order by p\.created_at desc, p\.id desc limit \d+$/,
  projectStatistics: /^select ps\.project_id as id,.* from project_statistics ps /,
  managers: /^select pm\.project_id, u\.id, .* from project_manager pm /,
  templates: /^select t\.id, t\.project_id, /,
  templateStats: /^select ts\.template_id as id,/,
  versions: /^select v\.document_id, v\.version /,
  contractors: /^select c\.id, c\.name, /,
  documents: /^select d\.id, d\.template_id, /,
  trades: /^select pt\.id, pt\.project_id, .* from project_trade pt /,
} as const;
type Kind = keyof typeof KINDS;

/** Statements run once the page is known, by its project ids. */
const BY_PROJECTS = ['projectStatistics', 'managers', 'trades', 'templates', 'templateStats', 'versions', 'contractors', 'documents'] as const satisfies readonly Kind[];

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

/** The two forms an id list takes in the service's texts: its `uuid[]` literal (uuidArraySql), MikroORM's `in (...)`. */
const arrayForm = (ids: readonly string[]) => `'{${ids.join(',')}}'`;
const inForm = (ids: readonly string[]) => `('${ids.join("', '")}')`;

/** A statement's text with the page's project ids taken out: the texts between them, and which form goes where. */
interface Template {
  kind: Kind;
  parts: string[];
  holes: Array<'array' | 'in'>;
}

interface Caller {
  userId: string;
  currentOrganizationId: string;
  adminOrganizationIds: string[];
}

interface Configuration {
  /** The document and variables answered (JSON of the request's `query` and `variables`). */
  document: string;
  variables: { first: number };
  caller: Caller;
  statements: RecordedStatement[];
  cost: { requested: number; limit: number };
}

/** Splits `parts` at every occurrence of `literal`, noting `hole` for each. */
function cut(template: Template, literal: string, hole: 'array' | 'in'): void {
  const parts: string[] = [];
  const holes: Array<'array' | 'in'> = [];
  template.parts.forEach((part, i) => {
    const pieces = part.split(literal);
    pieces.forEach((piece, k) => {
      if (k > 0) holes.push(hole);
      parts.push(piece);
    });
    if (i < template.holes.length) holes.push(template.holes[i]);
  });
  template.parts = parts;
  template.holes = holes;
}

/** A PostgreSQL timestamptz text (the session's zone is UTC) as the service writes it: microseconds and Z. */
function time(text: string | null): string | null {
  if (text === null) return null;
  // `2026-11-01 08:00:00+00`, and with a fraction of the second: the one form a UTC session writes for our years.
  if (text.endsWith('+00') && text.charCodeAt(10) === 32 && text.length >= 22) {
    const fraction = text.length === 22 ? '' : text.slice(20, -3);
    if (text.length === 22 || (text.charCodeAt(19) === 46 && fraction.length <= 6)) {
      return `${text.slice(0, 10)}T${text.slice(11, 19)}.${fraction.padEnd(6, '0')}Z`;
    }
  }
  const parsed = parseTimestamp(text);
  if (!parsed) throw new Error(`a timestamp the floor does not read: ${text}`);
  return formatTimestamp(parsed);
}

// Rows as the statements answer them (the columns the answer uses; pg's parsers, timestamps and dates kept as text).
interface ProjectRow { id: string; name: string; organization_id: string; construction_type: string; response_type: string; end_of_offer_date: string | null; scopes: { currency?: string | null; vat: number } | null; archived_at: string | null; created_at: string }
interface StatisticsRow { id: string; answered: number; may_answer: number; declined: number; contractors: number; tender_documents: number; total: string; simulated_cost: string; anticipated_trades: string; anticipated_offers: string; to_assign: string; deviation: string; to_assign_percent: string; deviation_percent: string }
interface UserRow { id: string; first_name: string; last_name: string; email: string }
interface TradeRow { id: string; project_id: string; number: string; name: string; short_name: string; comment: string | null }
interface TemplateRow { id: string; project_id: string; is_slice: boolean; slice_name: string | null; response_type: string | null; closed_at: string | null; consultation_started_at: string | null; budget: string; trade_id: string }
interface TemplateStatsRow { id: string; delta_budget: string; contractors: number; answers: number; pending: number; declined: number; in_revision: number; intention_no: number; intention_maybe: number }
interface VersionRow { document_id: string; version: number; id: string; sub_total: string; discount: string; status: string; sent_at: string | null; is_mandate: boolean }
interface ContractorRow { id: string; name: string; email: string; phone: string | null; fiscal_number: string | null }
interface DocumentRow { id: string; template_id: string; contractor_id: string; intention: string | null; dce_downloaded_at: string | null; state: string }

/** Values of each object the answer holds (its keys, `__typename` included): what `actual` counts. */
const VALUES = {
  query: 3, user: 8, organization: 3, connection: 4, pageInfo: 5, project: 14, scopes: 3, statistics: 9, budgets: 7, amountPercent: 3,
  manager: 5, trade: 7, template: 13, templateBudgets: 2, stats: 11, document: 7, contractor: 6, information: 2, version: 8, slice: 2,
} as const;

class Floor {
  private readonly templates = new Map<Kind, Template>();
  private readonly fixed = new Map<Kind, string>();
  private connections = new WeakMap<pg.PoolClient, number>();
  private nextConnection = 1;
  statements = 0;

  constructor(private readonly pool: pg.Pool, private readonly recorder: StatementRecorder, readonly configuration: Configuration) {}

  /** Makes the templates of the service's statements; throws what makes them unusable. */
  async prepare(): Promise<void> {
    const { caller, statements } = this.configuration;
    const byKind = new Map<Kind, string>();
    for (const s of statements) {
      const sql = s.sql.trim().replace(/\s+/g, ' ');
      const kind = (Object.keys(KINDS) as Kind[]).find((k) => KINDS[k].test(sql));
      if (!kind) throw new Error(`a statement the floor does not know: ${sql.slice(0, 200)}`);
      if (byKind.has(kind)) throw new Error(`two statements of kind ${kind}`);
      if (s.bindings.length) throw new Error(`statement ${kind} has bindings: the floor expects values in the text, as MikroORM writes them`);
      byKind.set(kind, s.sql);
    }
    const missing = (Object.keys(KINDS) as Kind[]).filter((k) => !byKind.has(k));
    if (missing.length) throw new Error(`the service ran no statement of kind ${missing.join(', ')}`);

    // The caller's ids, the same in every request: written in once.
    const orgs = caller.adminOrganizationIds;
    const withCaller = new Map<Kind, string>();
    for (const [kind, sql] of byKind) {
      withCaller.set(kind, sql.split(arrayForm(orgs)).join('\u0000ORGS_ARRAY\u0000').split(inForm(orgs)).join('\u0000ORGS_IN\u0000')
        .split(`'${caller.userId}'`).join('\u0000USER\u0000'));
    }
    const restore = (sql: string) => sql.replaceAll('\u0000ORGS_ARRAY\u0000', arrayForm(orgs)).replaceAll('\u0000ORGS_IN\u0000', inForm(orgs))
      .replaceAll('\u0000USER\u0000', `'${caller.userId}'`);

    // The page's project ids as the floor computes them (the page's rows, in their order): those of the texts.
    // (The page's statement reads one row more than `first`: whether there is a next page.)
    const pageIds = (await this.run<{ id: string }>('page', restore(withCaller.get('page')!))).slice(0, this.configuration.variables.first).map((r) => r.id);
    for (const [kind, sql] of withCaller) {
      const template: Template = { kind, parts: [sql], holes: [] };
      if ((BY_PROJECTS as readonly Kind[]).includes(kind)) {
        cut(template, arrayForm(pageIds), 'array');
        cut(template, inForm(pageIds), 'in');
        if (!template.holes.length) throw new Error(`statement ${kind} does not carry the page's project ids as the floor reads them (${pageIds.length} ids, in the page's order)`);
      }
      template.parts = template.parts.map(restore);
      const rest = template.parts.map((p) => p.replaceAll(arrayForm(orgs), '').replaceAll(inForm(orgs), '').replaceAll(`'${caller.userId}'`, '')).find((p) => UUID.test(p));
      if (rest) throw new Error(`statement ${kind} carries an id the floor does not compute: ${UUID.exec(rest)![0]}`);
      if (template.holes.length) this.templates.set(kind, template);
      else this.fixed.set(kind, template.parts[0]);
    }
  }

  /** Runs a statement on a connection of the pool; its rows. */
  private async run<R>(kind: Kind, sql: string): Promise<R[]> {
    this.statements++;
    const client = await this.pool.connect();
    let connection = this.connections.get(client);
    if (connection === undefined) this.connections.set(client, connection = this.nextConnection++);
    const recorded = this.recorder.on ? this.recorder.sent('floor', `client${connection}`, null, sql, []) : null;
    try {
      const { rows } = await client.query(sql);
      this.recorder.answered(recorded, rows.length);
      return rows as R[];
    } finally {
      client.release();
    }
  }

  private fixedStatement<R>(kind: Kind): Promise<R[]> {
    return this.run<R>(kind, this.fixed.get(kind)!);
  }

  private byProjects<R>(kind: Kind, array: string, list: string): Promise<R[]> {
    const { parts, holes } = this.templates.get(kind)!;
    let sql = parts[0];
    for (let i = 0; i < holes.length; i++) sql += (holes[i] === 'array' ? array : list) + parts[i + 1];
    return this.run<R>(kind, sql);
  }

  /** The dashboard's answer, as text. */
  async answer(): Promise<string> {
    const { caller, variables, cost } = this.configuration;
    const me = (async () => {
      const [user] = await this.fixedStatement<UserRow>('user');
      // With their members (`users`), which the service reads with them though the dashboard shows none of them.
      const organizations = await this.fixedStatement<{ id: string; name: string }>('organizations');
      return { user, organizations };
    })();
    const projects = (async () => {
      const [[{ n }], page] = await Promise.all([this.fixedStatement<{ n: string }>('count'), this.fixedStatement<ProjectRow>('page')]);
      const hasNextPage = page.length > variables.first;
      if (hasNextPage) page.pop();
      if (!page.length) return { n, page, hasNextPage, rows: null };
      const ids = page.map((p) => p.id);
      const array = arrayForm(ids);
      const list = inForm(ids);
      const [statistics, managers, trades, templates, templateStats, versions, contractors, documents] = await Promise.all([
        this.byProjects<StatisticsRow>('projectStatistics', array, list),
        this.byProjects<UserRow & { project_id: string }>('managers', array, list),
        this.byProjects<TradeRow>('trades', array, list),
        this.byProjects<TemplateRow>('templates', array, list),
        this.byProjects<TemplateStatsRow>('templateStats', array, list),
        this.byProjects<VersionRow>('versions', array, list),
        this.byProjects<ContractorRow>('contractors', array, list),
        this.byProjects<DocumentRow>('documents', array, list),
      ]);
      return { n, page, hasNextPage, rows: { statistics, managers, trades, templates, templateStats, versions, contractors, documents } };
    })();
    const [{ user, organizations }, { n, page, hasNextPage, rows }] = await Promise.all([me, projects]);

    let actual = VALUES.query;
    const organizationById = new Map<string, { __typename: 'Organization'; id: string; name: string }>();
    for (const o of organizations) organizationById.set(o.id, { __typename: 'Organization', id: o.id, name: o.name });
    const organizationOf = (id: string) => {
      const o = organizationById.get(id) ?? null;
      if (o) actual += VALUES.organization;
      return o;
    };
    actual += VALUES.user;
    const meAnswer = {
      __typename: 'User', id: user.id, firstName: user.first_name, lastName: user.last_name, email: user.email,
      currentOrganizationId: caller.currentOrganizationId,
      currentOrganization: organizationOf(caller.currentOrganizationId),
      organizations: caller.adminOrganizationIds.map(organizationOf),
    };

    const nodes: unknown[] = [];
    if (rows) {
      const statisticsById = new Map<string, StatisticsRow>();
      for (const s of rows.statistics) statisticsById.set(s.id, s);
      const managersByProject = new Map<string, unknown[]>();
      for (const m of rows.managers) {
        let list = managersByProject.get(m.project_id);
        if (!list) managersByProject.set(m.project_id, list = []);
        list.push({ __typename: 'User', id: m.id, firstName: m.first_name, lastName: m.last_name, email: m.email });
      }
      const tradesByProject = new Map<string, unknown[]>();
      const tradeById = new Map<string, unknown>();
      for (const t of rows.trades) {
        const trade = { __typename: 'ProjectTrade', id: t.id, projectId: t.project_id, number: t.number, name: t.name, shortName: t.short_name, comment: t.comment };
        tradeById.set(t.id, trade);
        let list = tradesByProject.get(t.project_id);
        if (!list) tradesByProject.set(t.project_id, list = []);
        list.push(trade);
      }
      const contractorById = new Map<string, unknown>();
      for (const c of rows.contractors) {
        contractorById.set(c.id, {
          __typename: 'Contractor', id: c.id, name: c.name, email: c.email, phone: c.phone,
          information: { __typename: 'CompanyInformation', fiscalNumber: c.fiscal_number },
        });
      }
      const versionsByDocument = new Map<string, unknown[]>();
      for (const v of rows.versions) {
        let list = versionsByDocument.get(v.document_id);
        if (!list) versionsByDocument.set(v.document_id, list = []);
        list.push({
          __typename: 'DocumentVersion', id: v.id, version: v.version, status: v.status, subTotal: amountOf(v.sub_total),
          discount: amountOf(v.discount), sentAt: time(v.sent_at), isMandate: v.is_mandate,
        });
      }
      // Every document is placed under its template (the page's templates are all placed): counted here.
      const documentsByTemplate = new Map<string, unknown[]>();
      for (const d of rows.documents) {
        const contractor = contractorById.get(d.contractor_id);
        if (!contractor) throw new Error(`contractor ${d.contractor_id} of document ${d.id} was not read`);
        const versions = versionsByDocument.get(d.id) ?? [];
        actual += VALUES.document + VALUES.contractor + VALUES.information + VALUES.version * versions.length;
        let list = documentsByTemplate.get(d.template_id);
        if (!list) documentsByTemplate.set(d.template_id, list = []);
        list.push({ __typename: 'Document', id: d.id, state: d.state, intention: d.intention, dceDownloadedAt: time(d.dce_downloaded_at), contractor, versions });
      }
      const statsById = new Map<string, TemplateStatsRow>();
      for (const s of rows.templateStats) statsById.set(s.id, s);
      // A project's templates, and a main template's slices (its project's slices of its trade), in the templates' order.
      const templatesByProject = new Map<string, TemplateRow[]>();
      const slicesByTrade = new Map<string, Array<{ __typename: 'Template'; id: string }>>();
      for (const t of rows.templates) {
        let list = templatesByProject.get(t.project_id);
        if (!list) templatesByProject.set(t.project_id, list = []);
        list.push(t);
        if (t.is_slice) {
          let slices = slicesByTrade.get(t.trade_id);
          if (!slices) slicesByTrade.set(t.trade_id, slices = []);
          slices.push({ __typename: 'Template', id: t.id });
        }
      }

      for (const p of page) {
        actual += VALUES.project;
        const s = statisticsById.get(p.id);
        let statistics = null;
        if (s) {
          actual += VALUES.statistics + VALUES.budgets + 2 * VALUES.amountPercent;
          statistics = {
            __typename: 'ProjectStatistics', id: `${p.id}:statistics`, projectId: p.id,
            answered: Number(s.answered ?? 0), mayAnswer: Number(s.may_answer ?? 0), declined: Number(s.declined ?? 0),
            contractors: Number(s.contractors ?? 0), tenderDocuments: Number(s.tender_documents ?? 0),
            budgets: {
              __typename: 'ProjectBudgets', total: fromCents(s.total), simulatedCost: fromCents(s.simulated_cost),
              totalAnticipatedTrades: fromCents(s.anticipated_trades), totalAnticipatedOffers: fromCents(s.anticipated_offers),
              budgetTradesToAssign: { __typename: 'AmountPercent', value: fromCents(s.to_assign), percent: amountOf(s.to_assign_percent) },
              projectDeviation: { __typename: 'AmountPercent', value: fromCents(s.deviation), percent: amountOf(s.deviation_percent) },
            },
          };
        }
        const managers = managersByProject.get(p.id) ?? [];
        actual += VALUES.manager * managers.length;
        const trades = tradesByProject.get(p.id) ?? [];
        actual += VALUES.trade * trades.length;
        const templates: unknown[] = [];
        for (const t of templatesByProject.get(p.id) ?? []) {
          const trade = tradeById.get(t.trade_id);
          if (!trade) throw new Error(`trade ${t.trade_id} of template ${t.id} is not among its project's trades`);
          const ts = statsById.get(t.id);
          const slices = t.is_slice ? [] : slicesByTrade.get(t.trade_id) ?? [];
          actual += VALUES.template + VALUES.templateBudgets + VALUES.trade + (ts ? VALUES.stats : 0) + VALUES.slice * slices.length;
          templates.push({
            __typename: 'Template', id: t.id, projectId: t.project_id, isSlice: t.is_slice, slice: t.is_slice ? t.slice_name : null,
            responseType: t.response_type, closedAt: time(t.closed_at), consultationStartedAt: time(t.consultation_started_at),
            budgets: { __typename: 'TemplateBudgets', value: amountOf(t.budget) },
            trade,
            stats: ts ? {
              __typename: 'TemplateStats', id: `${t.id}:stats`, templateId: t.id, deltaBudget: amountOf(ts.delta_budget),
              contractors: Number(ts.contractors ?? 0), contractorsAnswers: Number(ts.answers ?? 0), contractorsPending: Number(ts.pending ?? 0),
              contractorsDeclined: Number(ts.declined ?? 0), contractorsInRevision: Number(ts.in_revision ?? 0),
              contractorsIntentionIsNo: Number(ts.intention_no ?? 0), contractorsIntentionIsMaybe: Number(ts.intention_maybe ?? 0),
            } : null,
            documents: documentsByTemplate.get(t.id) ?? [],
            slices,
          });
        }
        const scopes = p.scopes ? { __typename: 'ProjectScopes', currency: p.scopes.currency ?? null, vat: p.scopes.vat } : null;
        if (scopes) actual += VALUES.scopes;
        nodes.push({
          __typename: 'Project', id: p.id, name: p.name, constructionType: p.construction_type, responseType: p.response_type,
          endOfOfferDate: p.end_of_offer_date, archived: p.archived_at !== null, archivedAt: time(p.archived_at), scopes, statistics,
          organization: organizationOf(p.organization_id), managers, trades, templates,
        });
      }
    }
    const cursor = (p: ProjectRow) => Buffer.from(JSON.stringify({ c: time(p.created_at), i: p.id })).toString('base64url');
    actual += VALUES.connection + VALUES.pageInfo;
    const data = {
      __typename: 'Query',
      me: meAnswer,
      projects: {
        __typename: 'ProjectConnection',
        totalCount: Number(n),
        pageInfo: {
          __typename: 'PageInfo', hasNextPage, hasPreviousPage: false,
          startCursor: page.length ? cursor(page[0]) : null, endCursor: page.length ? cursor(page[page.length - 1]) : null,
        },
        nodes,
      },
    };
    // As Apollo writes it: the JSON, then a line feed.
    return `${JSON.stringify({ data, extensions: { cost: { requested: cost.requested, actual, limit: cost.limit } } })}\n`;
  }
}

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  // The service's pool bounds and startup settings (src/platform/database/limits.ts), timestamps and dates as
  // PostgreSQL's text (as MikroORM's connection reads them: the microseconds are kept).
  const types = new pg.TypeOverrides();
  for (const oid of [1082, 1114, 1184, 1186]) types.setTypeParser(oid, (text: string) => text);
  const pool = new pg.Pool({
    connectionString: config.databaseUrl!, max: config.database.poolSize, connectionTimeoutMillis: config.database.connectTimeoutMs,
    application_name: 'tender-bff dashboard floor', types, ...startupParameters(config.database),
  });
  // The scratch database is dropped with its connections when the benchmark ends: an idle client's error then is expected.
  pool.on('error', () => undefined);
  const recorder = new StatementRecorder();
  let floor: Floor | null = null;

  const server = http.createServer((req, res) => {
    const answer = (status: number, text: string) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    const refuse = (status: number, message: string) => answer(status, JSON.stringify({ errors: [{ message }] }));
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/graphql') return refuse(404, 'the floor answers POST /graphql only');
      if (!floor) return refuse(503, 'the floor is not configured yet');
      let body: { query?: unknown; variables?: unknown };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
      } catch {
        return refuse(400, 'the body is not JSON');
      }
      const { document, variables } = floor.configuration;
      if (body.query !== document || JSON.stringify(body.variables) !== JSON.stringify(variables)) {
        return refuse(400, 'the floor answers the dashboard document with its variables only');
      }
      floor.answer().then((text) => answer(200, text), (err: Error) => {
        console.error(err);
        refuse(500, err.message);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  answerProbes({
    server,
    statements: () => floor?.statements ?? 0,
    recorder,
    stop: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.end();
    },
  });
  process.on('message', (message: { cmd: string } & Partial<Configuration>) => {
    if (message.cmd !== 'configure') return;
    const candidate = new Floor(pool, recorder, message as Configuration);
    candidate.prepare().then(() => {
      floor = candidate;
      process.send!({ cmd: 'configured', error: null });
    }, (err: Error) => process.send!({ cmd: 'configured', error: err.message }));
  });
  process.send!({ cmd: 'listening', url: `http://127.0.0.1:${port}` });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
