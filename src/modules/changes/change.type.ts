import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';
import type { ChangeKind } from '../../platform/events/change-event';
import { Project } from '../projects/project.output';
import { Template } from '../templates/template.output';

/** GraphQL names of the change kinds (src/platform/events/change-event.ts); the values stay the internal ones. */
const ChangeKindEnum: Record<Uppercase<ChangeKind>, ChangeKind> = {
  PROJECT: 'project',
  TRADE: 'trade',
  TEMPLATE: 'template',
  DOCUMENT: 'document',
  VERSION: 'version',
  INTERRUPTED: 'interrupted',
  RESUMED: 'resumed',
  RESYNC: 'resync',
};
registerEnumType(ChangeKindEnum, {
  name: 'ChangeKind',
  description: 'What changed: a project (its fields, archive, managers), a trade of it, a template or slice, an invited contractor\'s document, a version (an answer) of a document; and notices about the updates themselves: INTERRUPTED (the service hears no change for now), RESUMED (it hears again and missed nothing), RESYNC (changes may have been missed: refetch what you show)',
  valuesConfig: {
    PROJECT: { description: 'The project\'s own fields, its archive, its managers' },
    TRADE: { description: 'A trade of the project was added, edited or removed' },
    TEMPLATE: { description: 'A template or slice was added, edited or removed' },
    DOCUMENT: { description: 'A contractor was invited, or their document changed (intention, tender documents downloaded)' },
    VERSION: { description: 'A contractor answered, declined, or their answer changed' },
    INTERRUPTED: { description: 'The service hears no change for now (its decoder or bus is away): changes made meanwhile come late, or RESYNC follows if some may have been lost. The payload is fresh' },
    RESUMED: { description: 'The service hears again after INTERRUPTED and missed nothing: changes made meanwhile come (or came) in their own updates' },
    RESYNC: { description: 'Changes may have been missed: the payload is fresh, what else you show may not be' },
  },
});

@ObjectType({ description: 'An update of `projectChanged`: what changed in the project since its last update, and the project as it is now' })
export class ProjectChange {
  @Field(() => ID) projectId!: string;
  @Field(() => [ChangeKindEnum], { description: 'What changed, each kind once' }) changes!: ChangeKind[];
  @Field(() => [ID], { description: 'Templates and slices that changed, or whose documents did' }) templateIds!: string[];
  @Field(() => [ID], { description: 'Documents that changed (invitations, answers)' }) documentIds!: string[];
  @Field(() => Project, { description: 'The project now, with its fresh `statistics`' }) project!: Project;
}

@ObjectType({ description: 'An update of `templateChanged`: what changed in the template (or its slices) since its last update, and the template as it is now' })
export class TemplateChange {
  @Field(() => ID) templateId!: string;
  @Field(() => ID) projectId!: string;
  @Field(() => [ChangeKindEnum], { description: 'What changed, each kind once' }) changes!: ChangeKind[];
  @Field(() => [ID], { description: 'Documents of the template or its slices that changed' }) documentIds!: string[];
  @Field(() => Template, { nullable: true, description: 'The template now, with its fresh `stats` and `documents`; null once it is deleted (the subscription then ends)' }) template!: Template | null;
}
