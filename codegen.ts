import type { CodegenConfig } from '@graphql-codegen/cli';
import { addTypenameSelectionDocumentTransform } from '@graphql-codegen/client-preset';

/**
 * Typed documents (TypedDocumentNode) for the operations front ends use, kept in examples/graphql and generated
 * from the committed schema.graphql: `npm run codegen`. test/codegen.test.ts generates them again elsewhere
 * (CODEGEN_OUTPUT) and fails when the committed ones differ.
 */
const output = process.env.CODEGEN_OUTPUT ?? 'examples/graphql/generated/';

const config: CodegenConfig = {
  schema: 'schema.graphql',
  documents: ['examples/graphql/*.graphql'],
  generates: {
    [output]: {
      preset: 'client',
      // Components read the fields they select: no fragment masking.
      // persisted-documents.json: the trusted documents' manifest (hash -> document), which the service loads (docs/trusted-documents.md).
      presetConfig: { fragmentMasking: false, persistedDocuments: true },
      // Apollo's cache needs every object's __typename: in the documents themselves, so that a document sent by id
      // (whose text the service takes from the manifest) answers what the cache would have asked for.
      documentTransforms: [addTypenameSelectionDocumentTransform],
      config: {
        // Enums as string unions: the values are the words of the interface ('office', 'DPGF').
        enumsAsTypes: true,
        useTypeImports: true,
        scalars: { DateTime: 'string' },
      },
    },
  },
};

export default config;
