#!/usr/bin/env node
/**
 * `node scripts/openapi-stats.js openapi.json`: the figures of docs/openapi.md about an OpenAPI document
 * (operations, named response components, `required` coverage of response objects, unused components).
 * Response object schemas are counted once each: a named component once however often it is referenced,
 * an inline schema once per place it is written.
 */
const fs = require('node:fs');

const doc = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const METHODS = ['get', 'post', 'put', 'delete', 'patch'];
const operations = Object.values(doc.paths).flatMap((item) => METHODS.filter((m) => item[m]).map((m) => item[m]));

const seen = new Set();
const referenced = new Set();
let objects = 0;
let withoutRequired = 0;
let properties = 0;
let requiredProperties = 0;
const responseComponents = new Set();

function walk(schema, fromResponse) {
  if (!schema || typeof schema !== 'object' || seen.has(schema)) return;
  seen.add(schema);
  if (Array.isArray(schema)) return schema.forEach((s) => walk(s, fromResponse));
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.split('/').pop();
    referenced.add(schema.$ref);
    if (fromResponse && schema.$ref.startsWith('#/components/schemas/')) responseComponents.add(name);
    const target = schema.$ref.split('/').slice(1).reduce((o, k) => o?.[k], doc);
    return walk(target, fromResponse);
  }
  if (fromResponse && schema.properties && typeof schema.properties === 'object') {
    objects++;
    const names = Object.keys(schema.properties);
    const required = new Set(schema.required ?? []);
    if (!schema.required) withoutRequired++;
    properties += names.length;
    requiredProperties += names.filter((n) => required.has(n)).length;
  }
  for (const [k, v] of Object.entries(schema)) if (k !== 'example' && k !== 'examples') walk(v, fromResponse);
}

for (const op of operations) {
  for (const res of Object.values(op.responses ?? {})) walk(res, true);
  walk(op.parameters, false);
  walk(op.requestBody, false);
  walk(op.security, false);
}
walk(doc.paths, false);
// Components that reference others (headers, responses, parameters) count as uses of those.
for (const [kind, group] of Object.entries(doc.components ?? {})) {
  for (const [name, value] of Object.entries(group)) if (referenced.has(`#/components/${kind}/${name}`)) walk(value, false);
}
const unused = Object.entries(doc.components ?? {}).filter(([kind]) => kind !== 'securitySchemes')
  .flatMap(([kind, group]) => Object.keys(group).filter((name) => !referenced.has(`#/components/${kind}/${name}`)).map((n) => `${kind}/${n}`));

const result = {
  operations: operations.length,
  distinctOperationIds: new Set(operations.map((o) => o.operationId)).size,
  namedResponseComponents: [...responseComponents].filter((n) => n !== 'ErrorBody').length,
  responseObjectSchemas: objects,
  responseObjectSchemasWithoutRequired: withoutRequired,
  responseProperties: properties,
  requiredResponseProperties: requiredProperties,
  unusedComponents: unused,
  tagsDefined: (doc.tags ?? []).length,
  license: doc.info?.license ?? null,
  securitySchemes: Object.fromEntries(Object.entries(doc.components?.securitySchemes ?? {}).map(([k, v]) => [k, v.type])),
};
console.log(JSON.stringify(result, null, 2));
