import { Arg, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root, UseMiddleware } from 'type-graphql';
import { OrganizationService } from '../../services/organization.service';
import type { GraphQLContext } from '../context';
import { uuidArguments } from '../uuid-args';
import { Me, Organization } from '../types/organization.type';

@UseMiddleware(uuidArguments)
@Resolver(() => Organization)
export class OrganizationResolver {
  @Query(() => Me, { description: 'The authenticated caller' })
  me(@Ctx() { sc }: GraphQLContext): Me {
    return {
      id: sc.caller.userId,
      email: sc.caller.email,
      currentOrganizationId: sc.caller.currentOrganizationId,
      organizationIds: sc.caller.adminOrganizationIds,
    };
  }

  @Query(() => [Organization], { description: 'Organizations where the caller is Administrator' })
  organizations(@Ctx() { sc }: GraphQLContext) {
    return new OrganizationService(sc).list();
  }

  @Query(() => Organization)
  organization(@Arg('id', () => ID) id: string, @Ctx() { sc }: GraphQLContext) {
    return new OrganizationService(sc).get(id);
  }

  @Mutation(() => Organization, { description: 'Sets the caller\'s current organization' })
  switchOrganization(@Arg('organizationId', () => ID) organizationId: string, @Ctx() { sc }: GraphQLContext) {
    return new OrganizationService(sc).switch(organizationId);
  }
}

@Resolver(() => Me)
export class MeResolver {
  @FieldResolver(() => Organization, { description: 'The current organization' })
  currentOrganization(@Root() me: Me, @Ctx() { loaders }: GraphQLContext) {
    return loaders.organization.load(me.currentOrganizationId);
  }

  @FieldResolver(() => [Organization], { description: 'Organizations where the caller is Administrator' })
  organizations(@Root() me: Me, @Ctx() { loaders }: GraphQLContext) {
    return loaders.organization.loadMany(me.organizationIds);
  }
}
