import { ApolloArmor } from '@escape.tech/graphql-armor';
import {
  GraphQLError, Kind, type ASTNode, type DocumentNode, type FragmentDefinitionNode, type SelectionSetNode, type ValidationContext,
  type ValidationRule,
} from 'graphql';
import { GraphQLLimitError, type GraphQLLimitCode } from '../errors/errors';

/**
 * Limits on what one GraphQL document may ask, for HTTP and WebSocket alike (values and reasons in docs/decisions.md,
 * "Limits"). Each refusal answers 400 with its own code, before anything of the document runs.
 */
export const GRAPHQL_LIMITS = {
  /** UTF-8 bytes of a document's text, checked before it is parsed (trusted documents come from the manifest instead). */
  maxDocumentBytes: 64 * 1024,
  maxTokens: 4000,
  maxDepth: 12,
  maxAliases: 15,
  maxDirectives: 20,
  /** Fields selected again under a name their selection set already has, in the whole document. */
  maxRepeatedFields: 100,
  /** Requested cost of an operation (src/platform/graphql/cost.ts). */
  maxCost: 20000,
};

/** A limit's refusal as a validation error: GraphQL's shape with the limit's own code (src/platform/errors/graphql.ts). */
export function limitError(code: GraphQLLimitCode, message: string, nodes?: ASTNode | readonly ASTNode[]): GraphQLError {
  return new GraphQLError(message, { nodes, originalError: new GraphQLLimitError(code, message) });
}

/** Refuses a document whose text is over the limit, before anything parses it (a comment is one token of any size). */
export function checkDocumentSize(query: unknown): void {
  if (typeof query !== 'string' || query.length <= GRAPHQL_LIMITS.maxDocumentBytes / 3) return;
  const bytes = Buffer.byteLength(query);
  if (bytes > GRAPHQL_LIMITS.maxDocumentBytes) {
    throw new GraphQLLimitError('DOCUMENT_SIZE_LIMIT', `The document is ${bytes} bytes long, over the limit of ${GRAPHQL_LIMITS.maxDocumentBytes} bytes`);
  }
}

/**
 * Counts, in the whole document, the fields selected again under a response name their selection set (inline
 * fragments and fragment spreads merged in, as execution merges them) already has. graphql-js's check that such
 * fields can merge compares them pair by pair, through every level below: a few thousand repeats cost it hundreds of
 * milliseconds before it gives up with a bare "Validation aborted.". Counting them is one pass.
 */
function repeatedFields(document: DocumentNode): number {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  // Response names at a fragment's own level, computed once per fragment (a cycle is another rule's refusal).
  const fragmentNames = new Map<string, Map<string, number>>();
  let repeats = 0;

  const add = (into: Map<string, number>, name: string, n: number) => into.set(name, (into.get(name) ?? 0) + n);
  const levelNames = (set: SelectionSetNode, into: Map<string, number>, nested: SelectionSetNode[]): void => {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        add(into, (selection.alias ?? selection.name).value, 1);
        if (selection.selectionSet) nested.push(selection.selectionSet);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        levelNames(selection.selectionSet, into, nested);
      } else {
        for (const [name, n] of namesOfFragment(selection.name.value)) add(into, name, n);
      }
    }
  };
  const namesOfFragment = (name: string): Map<string, number> => {
    const known = fragmentNames.get(name);
    if (known) return known;
    const names = new Map<string, number>();
    fragmentNames.set(name, names);
    const fragment = fragments.get(name);
    // Its nested selection sets are counted once, with the fragment's definition below.
    if (fragment) levelNames(fragment.selectionSet, names, []);
    return names;
  };

  const pending: SelectionSetNode[] = [];
  for (const d of document.definitions) {
    if (d.kind === Kind.OPERATION_DEFINITION || d.kind === Kind.FRAGMENT_DEFINITION) pending.push(d.selectionSet);
  }
  for (let set = pending.pop(); set; set = pending.pop()) {
    const names = new Map<string, number>();
    levelNames(set, names, pending);
    for (const n of names.values()) repeats += n - 1;
  }
  return repeats;
}

/**
 * Refuses, on entering the document, one with more repeated fields than the limit, and takes its definitions out of
 * what the other rules visit (the merge check would still spend its time on them).
 */
const repeatedFieldsRule: ValidationRule = (context) => ({
  Document(node) {
    const repeats = repeatedFields(node);
    if (repeats <= GRAPHQL_LIMITS.maxRepeatedFields) return undefined;
    context.reportError(limitError('FIELD_REPEAT_LIMIT',
      `The document selects ${repeats} fields again under a name their selection set already has, over the limit of ${GRAPHQL_LIMITS.maxRepeatedFields}: select each field once`));
    return { ...node, definitions: [] };
  },
});

/** graphql-armor's refusals, with our codes and without its `Syntax Error: ` prefix (they are not syntax errors). */
const reportAs = (code: GraphQLLimitCode) => ({
  propagateOnRejection: false,
  onReject: [(context: ValidationContext | null, error: GraphQLError) => context?.reportError(limitError(code, error.message.replace(/^Syntax Error: /, '')))],
});

/**
 * Validation rules of the limits on a document's shape, for HTTP (Apollo's validation) and WebSocket alike: repeated
 * fields first (it may empty the document for the others), then depth, aliases and directives (graphql-armor). The
 * token limit is graphql-js's parser's; the document's size is checked before parsing; cost needs the variables and
 * is the cost plugin's (src/platform/graphql/cost.ts).
 */
export function limitRules(): ValidationRule[] {
  const armor = new ApolloArmor({
    // Depth is that of the fields a query selects, however it is written: a fragment spread is not a level of its own
    // (front ends build their queries from fragments, as codegen and Apollo Client encourage).
    maxDepth: { n: GRAPHQL_LIMITS.maxDepth, flattenFragments: true, ...reportAs('DEPTH_LIMIT') },
    maxAliases: { n: GRAPHQL_LIMITS.maxAliases, ...reportAs('ALIAS_LIMIT') },
    maxDirectives: { n: GRAPHQL_LIMITS.maxDirectives, ...reportAs('DIRECTIVE_LIMIT') },
    costLimit: { enabled: false },
    // Counted by graphql-js's own parser (parseOptions); armor's plugin parsed every query a second time.
    maxTokens: { enabled: false },
    // Suggestions of every kind are masked in one place, src/platform/errors/graphql.ts.
    blockFieldSuggestion: { enabled: false },
  });
  return [repeatedFieldsRule, ...armor.protect().validationRules];
}
