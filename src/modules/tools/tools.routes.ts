import { DEMO_IDS, demoLegacyId } from '../examples';
import { IdsToUuidsInput, LEGACY_ID_LENGTH, UuidsToIdsInput } from './tools.input';
import { LegacyIdService } from './legacy-id.service';
import { route, type JsonSchema, type RouteDef } from '../../platform/rest/route';

const tag = 'Tools';

/** `{ resources }` with the request's nesting; null for an identifier unknown or not the caller's. */
const resources = (item: JsonSchema, example: unknown): JsonSchema => ({
  type: 'object',
  required: ['resources'],
  properties: { resources: { type: 'array', items: { type: 'array', items: { ...item, type: [item.type, 'null'] } }, examples: [[[example, null]]] } },
});

/** Operations #25, #32. */
export const toolRoutes: RouteDef[] = [
  route({
    operation: 25, operationId: 'idsToUuids', method: 'post', prefix: 'svc', path: '/tools/ids-to-uuids', tag,
    summary: 'Converts legacy identifiers to UUIDs, keeping the nesting; null for an identifier unknown or not the caller\'s.',
    body: IdsToUuidsInput, bodyOptional: true,
    success: { status: 200, description: '`{ resources }`', schema: resources({ type: 'string', format: 'uuid' }, DEMO_IDS.projects.residence) },
    async handler({ body, ...sc }) {
      return { body: { resources: await new LegacyIdService(sc).idsToUuids(body.resources) } };
    },
  }),
  route({
    operation: 32, operationId: 'uuidsToIds', method: 'post', prefix: 'internal', path: '/tools/uuids-to-ids', tag,
    summary: 'Converts UUIDs to legacy identifiers, keeping the nesting; null for a UUID unknown or not the caller\'s.',
    body: UuidsToIdsInput, bodyOptional: true,
    success: { status: 200, description: '`{ resources }`', schema: resources({ type: 'string', minLength: LEGACY_ID_LENGTH, maxLength: LEGACY_ID_LENGTH }, demoLegacyId(DEMO_IDS.projects.residence)) },
    async handler({ body, ...sc }) {
      return { body: { resources: await new LegacyIdService(sc).uuidsToIds(body.resources) } };
    },
  }),
];
