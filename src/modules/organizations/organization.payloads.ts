import { Ctx, Field, FieldResolver, ObjectType, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../context';
import { OrganizationService } from './organization.service';
import { Organization, User } from './organization.output';

@ObjectType({ simpleResolvers: true })
export class SwitchOrganizationPayload {
  @Field(() => Organization, { description: 'The caller\'s current organization now' }) organization!: Organization;
}

@Resolver(() => SwitchOrganizationPayload)
export class SwitchOrganizationPayloadResolver {
  @FieldResolver(() => User, { description: 'The caller, whose `currentOrganization` is now `organization`' })
  me(@Ctx() { sc }: GraphQLContext) {
    return new OrganizationService(sc).callerView();
  }
}
