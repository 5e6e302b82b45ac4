import type { CodegenConfig } from '@graphql-codegen/cli';

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
