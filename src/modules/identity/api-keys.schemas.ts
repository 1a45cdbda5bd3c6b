import { type Static, Type } from 'typebox';
import { Nullable, Timestamp, Uuid } from '../../http/schemas.js';
import { RoleSchema } from './users.schemas.js';

const Name = Type.String({ minLength: 1, maxLength: 200, description: 'What the key is for, 1-200 characters.' });

export const ApiKeySchema = Type.Object(
  {
    id: Uuid('Key id.'),
    name: Name,
    role: RoleSchema,
    prefix: Type.String({ description: 'The key\'s first 11 characters (`tm_` and 8 more): enough to tell keys apart, never enough to use one.' }),
    created_by: Uuid('The user the key acts as.'),
    created_at: Timestamp('When it was created.'),
    expires_at: Nullable(Timestamp('When it stops working.'), 'When it stops working, or null (never).'),
    last_used_at: Nullable(Timestamp('When it was last used (to the minute).'), 'When it was last used (to the minute), or null.'),
  },
  { title: 'ApiKey' },
);
export type ApiKeyOut = Static<typeof ApiKeySchema>;

export const ApiKeyCreatedSchema = Type.Object(
  {
    ...ApiKeySchema.properties,
    key: Type.String({ description: 'The key: shown in this answer only, kept by threatmon only as a hash.' }),
  },
  { title: 'ApiKeyCreated' },
);

export const ApiKeyCreateSchema = Type.Object(
  {
    name: Name,
    role: Type.Optional(RoleSchema),
    expires_at: Type.Optional(Nullable(Type.String({ format: 'date-time', description: 'When it stops working (in the future).' }), 'When it stops working, or null (never, the default).')),
  },
  { additionalProperties: false, description: 'role: at most yours (default yours).' },
);

export const ApiKeyPatchSchema = Type.Object(
  {
    name: Type.Optional(Name),
    role: Type.Optional(RoleSchema),
  },
  { additionalProperties: false },
);
