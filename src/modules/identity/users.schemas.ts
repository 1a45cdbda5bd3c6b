import { type Static, Type } from 'typebox';
import { Nullable, Timestamp, Uuid } from '../../http/schemas.js';
import { ROLES } from '../../domain/roles.js';

export const RoleSchema = Type.Enum([...ROLES], { type: 'string', description: 'Role in the organization: owner > admin > analyst > viewer.' });
/** What a login name may hold (a credential canary's name too: it must be one somebody could log in with). */
export const USERNAME_PATTERN = '^[A-Za-z0-9@.+_-]+$';
const Username = Type.String({ minLength: 1, maxLength: 150, pattern: USERNAME_PATTERN, description: 'Login name: letters, digits and @.+-_; unique.' });
const Email = Type.String({ format: 'email', maxLength: 254, description: 'E-mail address.' });

export const UserSchema = Type.Object(
  {
    id: Uuid('User id.'),
    username: Username,
    email: Email,
    role: RoleSchema,
    is_active: Type.Boolean({ description: 'False once deactivated: its tokens stop working at once.' }),
    is_staff: Type.Boolean({ description: 'Platform operator (manages leak sources and organizations).' }),
    created_at: Timestamp('When it was created.'),
    last_login_at: Nullable(Timestamp('Last successful login.'), 'Last successful login, or null.'),
  },
  { title: 'User' },
);
export type UserOut = Static<typeof UserSchema>;

export const UserCreateSchema = Type.Object(
  {
    username: Username,
    email: Email,
    password: Type.String({ minLength: 1, maxLength: 256, description: 'At least 12 characters, not in a known breach.' }),
    role: RoleSchema,
  },
  { additionalProperties: false },
);

export const UserPatchSchema = Type.Object(
  {
    role: Type.Optional(RoleSchema),
    email: Type.Optional(Email),
    is_active: Type.Optional(Type.Boolean({ description: 'False deactivates the user and revokes its tokens.' })),
  },
  { additionalProperties: false },
);
