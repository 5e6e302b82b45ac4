import { Arg, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root, UseMiddleware } from 'type-graphql';
import { OrganizationService, type UserView } from './organization.service';
import type { GraphQLContext } from '../context';
import { uuidArguments } from '../../platform/graphql/uuid-args';
import { Organization, User } from './organization.output';
import { SwitchOrganizationPayload } from './organization.payloads';

@UseMiddleware(uuidArguments)
@Resolver(() => Organization)
export class OrganizationResolver {
  @Query(() => User, { description: 'The authenticated caller' })
  me(@Ctx() { sc }: GraphQLContext) {
    return new OrganizationService(sc).callerView();
  }

  @Query(() => [Organization], { description: 'Organizations where the caller is Administrator' })
  organizations(@Ctx() { sc }: GraphQLContext) {
    return new OrganizationService(sc).list();
  }

  @Query(() => Organization)
  organization(@Arg('id', () => ID) id: string, @Ctx() { sc }: GraphQLContext) {
    return new OrganizationService(sc).get(id);
  }

  @Mutation(() => SwitchOrganizationPayload, { description: 'Sets the caller\'s current organization' })
  async switchOrganization(@Arg('organizationId', () => ID) organizationId: string, @Ctx() { sc }: GraphQLContext) {
    return { organization: await new OrganizationService(sc).switch(organizationId) };
  }
}

/**
 * The caller's own session on their `User` record: set on the caller, null on any other user (a manager, a user
 * of an organization), whatever path reached them, so one cached record per person stays true.
 */
@Resolver(() => User)
export class UserResolver {
  @FieldResolver(() => ID, { nullable: true, description: 'Caller only: the current organization\'s id' })
  currentOrganizationId(@Root() user: UserView, @Ctx() { sc }: GraphQLContext): string | null {
    return user.id === sc.caller.userId ? sc.caller.currentOrganizationId : null;
  }

  @FieldResolver(() => [ID], { nullable: true, description: 'Caller only: organizations where the caller is Administrator' })
  organizationIds(@Root() user: UserView, @Ctx() { sc }: GraphQLContext): string[] | null {
    return user.id === sc.caller.userId ? sc.caller.adminOrganizationIds : null;
  }

  @FieldResolver(() => Organization, { nullable: true, description: 'Caller only: the current organization' })
  currentOrganization(@Root() user: UserView, @Ctx() { sc, loaders }: GraphQLContext) {
    return user.id === sc.caller.userId ? loaders.organization.load(sc.caller.currentOrganizationId) : null;
  }

  @FieldResolver(() => [Organization], { nullable: true, description: 'Caller only: organizations where the caller is Administrator' })
  organizations(@Root() user: UserView, @Ctx() { sc, loaders }: GraphQLContext) {
    return user.id === sc.caller.userId ? loaders.organization.loadMany(sc.caller.adminOrganizationIds) : null;
  }
}
