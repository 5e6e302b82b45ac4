import { LevelingArgs, ProjectLevelingQuery, levelingThreshold, type LevelingFormat } from './leveling.input';
import { ProjectParams, TemplateParams } from '../../platform/rest/params';
import { CSV_TYPE, XLSX_TYPE, levelingCsv, levelingFileName, levelingWorkbook } from './leveling-spreadsheet';
import { LevelingService } from './leveling.service';
import { ProjectLeveling, TemplateLeveling } from './leveling.output';
import type { AppContext } from '../../platform/http/state';
import { keyed, route, type RouteDef } from '../../platform/rest/route';
import { toRest } from '../../platform/rest/serialize';

const EXTENSION = 'An extension beside the interface document (issue 13, docs/leveling.md): the same authorization, errors and rate limits as its operations.';

/** `format` wins; else what `Accept` prefers among the three; JSON when it names none of them, as every other path answers. */
function negotiate(format: LevelingFormat | undefined, ctx: AppContext): LevelingFormat {
  if (format) return format;
  const preferred = ctx.accepts('application/json', XLSX_TYPE, CSV_TYPE);
  return preferred === XLSX_TYPE ? 'xlsx' : preferred === CSV_TYPE ? 'csv' : 'json';
}

/** Bid leveling (issue 13): a project's lots side by side, as JSON, .xlsx or CSV; one lot as JSON. */
export const levelingRoutes: RouteDef[] = [
  route({
    operationId: 'getProjectLeveling', method: 'get', prefix: 'svc', path: '/projects/:projectId/leveling', tag: 'Leveling',
    summary: 'Bid leveling of a project: every lot\'s offers ranked against the budget, lowest and median, abnormally low offers flagged, the lots × contractors matrix and the sums against the total budget (archived projects included).',
    description: `${EXTENSION} \`Accept: ${XLSX_TYPE}\` (or \`format=xlsx\`) answers the tabulation as a workbook: a summary sheet with the matrix and one sheet per lot, lowest offers green and bold, abnormally low ones red; \`Accept: text/csv\` (or \`format=csv\`) the matrix as CSV. Both come as downloads named after the project.`,
    params: ProjectParams,
    query: ProjectLevelingQuery,
    success: {
      status: 200, description: '`{ leveling }`, or the .xlsx workbook, or the CSV matrix',
      schema: keyed('leveling', ProjectLeveling),
      otherMediaTypes: {
        [XLSX_TYPE]: { type: 'string', contentMediaType: XLSX_TYPE, description: 'The workbook' },
        [CSV_TYPE]: { type: 'string', description: 'Header `Lot,Name,Budget,<contractor>...,Lowest,Retained`, a row per lot, a `Total` row' },
      },
    },
    async handler({ params, query, ctx, ...sc }) {
      const leveling = await new LevelingService(sc).ofProject(params.projectId, levelingThreshold(query));
      switch (negotiate(query.format, ctx)) {
        case 'xlsx':
          return { body: await levelingWorkbook(leveling), type: XLSX_TYPE, attachment: levelingFileName(leveling, 'xlsx') };
        case 'csv':
          return { body: levelingCsv(leveling), type: `${CSV_TYPE}; charset=utf-8; header=present`, attachment: levelingFileName(leveling, 'csv') };
        default:
          return { body: { leveling: toRest(leveling) } };
      }
    },
  }),
  route({
    operationId: 'getTemplateLeveling', method: 'get', prefix: 'svc', path: '/projects/:projectId/templates/:templateId/leveling', tag: 'Leveling',
    summary: 'Bid leveling of one lot (a template, or a slice): its offers ranked against the budget, lowest and median, abnormally low offers flagged, and its summary.',
    description: EXTENSION,
    params: TemplateParams,
    query: LevelingArgs,
    success: { status: 200, description: '`{ leveling }`', schema: keyed('leveling', TemplateLeveling) },
    async handler({ params, query, ...sc }) {
      return { body: { leveling: toRest(await new LevelingService(sc).ofTemplate(params.projectId, params.templateId, levelingThreshold(query))) } };
    },
  }),
];
