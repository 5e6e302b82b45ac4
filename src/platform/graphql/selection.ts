import { Kind, TypeInfo, visit, visitWithTypeInfo, type DocumentNode, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';

/**
 * The fields an operation selects anywhere, by the type they are selected on: what the loaders ask the database
 * for (a document's `state`, a version's `hasFiles`, a page's `totalCount` cost work of their own). Read once per
 * request, when the operation is known (selectionPlugin in server.ts), before any field runs; until then, and
 * for a request that never reaches execution, every field counts as selected.
 */
export class OperationSelection {
  private fields: Set<string> | null = null;

  /** Whether the operation has been read (a subscription's delivery, for one, never is). */
  get known(): boolean {
    return this.fields !== null;
  }

  /** Whether `Type.field` is selected anywhere in the operation (in any of its fragments too). */
  has(type: string, field: string): boolean {
    return this.fields === null || this.fields.has(`${type}.${field}`);
  }

  /** Reads the operation: its own selections and those of the document's fragments. */
  read(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): void {
    const fields = new Set<string>();
    const typeInfo = new TypeInfo(schema);
    const fragments = document.definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION);
    for (const definition of [operation, ...fragments]) {
      visit(definition, visitWithTypeInfo(typeInfo, {
        Field() {
          const parent = typeInfo.getParentType();
          const field = typeInfo.getFieldDef();
          if (parent && field) fields.add(`${parent.name}.${field.name}`);
        },
      }));
    }
    this.fields = fields;
  }
}
