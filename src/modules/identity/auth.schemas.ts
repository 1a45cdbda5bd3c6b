import { Type } from 'typebox';

export const LoginSchema = Type.Object(
  {
    username: Type.String({ minLength: 1, maxLength: 150, description: 'Login name.' }),
    password: Type.String({ minLength: 1, maxLength: 256, description: 'Password.' }),
  },
  { additionalProperties: false },
);

export const TokenPairSchema = Type.Object({
  access: Type.String({ description: 'Access token (JWT, HS256), sent as `Authorization: Bearer <access>`.' }),
  refresh: Type.String({ description: 'Refresh token (JWT); single use: each refresh returns a new one.' }),
  token_type: Type.Literal('Bearer', { description: 'Always `Bearer`.' }),
  expires_in: Type.Integer({ description: 'Seconds until the access token expires.' }),
});

export const RefreshSchema = Type.Object(
  { refresh: Type.String({ minLength: 1, maxLength: 4096, description: 'The current refresh token.' }) },
  { additionalProperties: false },
);

export const VerifySchema = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 4096, description: 'An access or refresh token to check.' }) },
  { additionalProperties: false },
);

export const PasswordChangeSchema = Type.Object(
  {
    current_password: Type.String({ minLength: 1, maxLength: 256, description: 'The present password.' }),
    new_password: Type.String({ minLength: 1, maxLength: 256, description: 'At least 12 characters, not the username, not in a known breach.' }),
  },
  { additionalProperties: false },
);
