import { IdsToUuidsInput, UuidsToIdsInput } from '../services/inputs/tools.input';
import { LegacyIdService } from '../services/legacy-id.service';
import { route, type JsonSchema, type RouteDef } from './route';

const tag = 'Tools';

const resources = (item: JsonSchema): JsonSchema => ({
  type: 'object',
  properties: { resources: { type: 'array', items: { type: 'array', items: { ...item, type: [item.type, 'null'] } } } },
});

/** Operations #25, #32. */
export const toolRoutes: RouteDef[] = [
  route({
    operation: 25, operationId: 'idsToUuids', method: 'post', prefix: 'svc', path: '/tools/ids-to-uuids', tag,
    summary: 'Converts legacy identifiers to UUIDs, keeping the nesting; null for an identifier unknown or not the caller\'s.',
    body: IdsToUuidsInput, bodyOptional: true,
    success: { status: 200, description: '`{ resources }`', schema: resources({ type: 'string', format: 'uuid' }) },
    async handler({ body, ...sc }) {
      return { body: { resources: await new LegacyIdService(sc).idsToUuids(body.resources) } };
    },
  }),
  route({
    operation: 32, operationId: 'uuidsToIds', method: 'post', prefix: 'internal', path: '/tools/uuids-to-ids', tag,
    summary: 'Converts UUIDs to legacy identifiers, keeping the nesting; null for a UUID unknown or not the caller\'s.',
    body: UuidsToIdsInput, bodyOptional: true,
    success: { status: 200, description: '`{ resources }`', schema: resources({ type: 'string', minLength: 17, maxLength: 17 }) },
    async handler({ body, ...sc }) {
      return { body: { resources: await new LegacyIdService(sc).uuidsToIds(body.resources) } };
    },
  }),
];
