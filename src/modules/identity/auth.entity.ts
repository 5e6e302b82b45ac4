import { Entity, ManyToOne, Property, type Rel } from '@mikro-orm/core';
import { BaseEntity } from '../../platform/database/base.entity';
import { User } from '../organizations/user.entity';
import { TIMESTAMPTZ } from '../../platform/database/timestamp.type';

/** A signing key of the built-in development identity provider. `kid` is the JWK key id. */
@Entity({ tableName: 'signing_key' })
export class SigningKey extends BaseEntity {
  @Property({ type: 'string', unique: true })
  kid!: string;

  @Property({ type: 'json', hidden: true })
  privateJwk!: Record<string, unknown>;

  @Property({ type: 'json' })
  publicJwk!: Record<string, unknown>;

  /** A retired key still verifies tokens it signed but signs no new ones. */
  @Property({ ...TIMESTAMPTZ, nullable: true })
  retiredAt?: Date | null;
}

/** A sign-in session of the development identity provider (`session_state`). */
@Entity({ tableName: 'auth_session' })
export class AuthSession extends BaseEntity {
  @ManyToOne(() => User, { index: true, deleteRule: 'cascade' })
  user!: Rel<User>;

  @Property({ type: 'string' })
  scope!: string;

  @Property({ type: 'string' })
  clientIp!: string;

  @Property({ ...TIMESTAMPTZ, nullable: true })
  revokedAt?: Date | null;
}

/** A single-use refresh token; only its hash is stored. */
@Entity({ tableName: 'refresh_token' })
export class RefreshToken extends BaseEntity {
  @ManyToOne(() => AuthSession, { index: true, deleteRule: 'cascade' })
  session!: Rel<AuthSession>;

  @Property({ type: 'string', unique: true })
  tokenHash!: string;

  @Property({ ...TIMESTAMPTZ })
  expiresAt!: Date;

  @Property({ ...TIMESTAMPTZ, nullable: true })
  usedAt?: Date | null;
}
