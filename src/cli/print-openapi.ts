/**
 * Writes the OpenAPI document the service serves at /api/svc/v1/openapi.json to openapi.json (committed, so
 * every change of the REST description shows in review; `npm run lint` lints it, clients generate from it),
 * under the development defaults.
 */
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../platform/config';
import { openApiDocument } from '../modules/rest';

export const OPENAPI_FILE = path.resolve(__dirname, process.env.OPENAPI_FILE ?? '../../../openapi.json');

// The defaults of development (the built-in identity provider); a deployment serves its own token endpoint.
writeFileSync(OPENAPI_FILE, `${JSON.stringify(openApiDocument(loadConfig({ NODE_ENV: 'development' })), null, 2)}\n`);
console.log(`wrote ${OPENAPI_FILE}`);
