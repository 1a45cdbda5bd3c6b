import { type Static, Type } from 'typebox';
import { PLANS } from '../../config.js';
import { Timestamp, Uuid } from '../../http/schemas.js';
import { UserSchema } from '../identity/index.js';

export const PlanSchema = Type.Enum([...PLANS], { type: 'string', description: 'Subscription plan: sets the rate limit.' });
const Name = Type.String({ minLength: 1, maxLength: 200, description: 'Organization name, unique across the platform.' });

export const OrganizationSchema = Type.Object(
  {
    id: Uuid('Organization id.'),
    name: Name,
    plan: PlanSchema,
    rate_limit_per_minute: Type.Integer({ description: 'Requests per minute the plan allows (0 when limits are off).' }),
    created_at: Timestamp('When it was created.'),
    member_count: Type.Integer({ description: 'Number of users in it.' }),
  },
  { title: 'Organization' },
);
export type Organization = Static<typeof OrganizationSchema>;

export const MeSchema = Type.Object(
  { ...UserSchema.properties, organization: OrganizationSchema },
  { description: 'The current user with its organization.' },
);

export const OrganizationPatchSchema = Type.Object(
  {
    name: Type.Optional(Name),
    plan: Type.Optional(PlanSchema),
  },
  { additionalProperties: false, description: '`name` needs admin; `plan` needs owner.' },
);

export const UsageSchema = Type.Object({
  plan: PlanSchema,
  limit: Type.Integer({ description: 'Requests per minute of the plan.' }),
  remaining: Type.Integer({ description: 'Requests left in the current window (this one counted).' }),
  reset_seconds: Type.Integer({ description: 'Seconds until the window resets.' }),
  monitors: Type.Integer({ description: 'Monitors of the organization.' }),
  tracking_tokens: Type.Integer({ description: 'Tracking tokens of the organization.' }),
  incidents_open: Type.Integer({ description: 'Incidents not resolved or closed.' }),
});

export const OwnerSchema = Type.Object(
  {
    username: Type.String({ minLength: 1, maxLength: 150, pattern: '^[A-Za-z0-9@.+_-]+$', description: 'Login name of the first owner.' }),
    email: Type.String({ format: 'email', maxLength: 254, description: 'E-mail of the first owner.' }),
    password: Type.String({ minLength: 1, maxLength: 256, description: 'Password, at least 12 characters, not in a known breach.' }),
  },
  { additionalProperties: false },
);

export const OrganizationCreateSchema = Type.Object(
  { name: Name, plan: Type.Optional(PlanSchema), owner: OwnerSchema },
  { additionalProperties: false, description: 'A new customer organization with its first owner (plan defaults to starter).' },
);
