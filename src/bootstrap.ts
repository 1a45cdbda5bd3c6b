import { randomBytes } from 'node:crypto';
import type { Services } from './app.js';
import type { AppDeps } from './deps.js';

export const DEFAULT_ORG = 'Default';
export const ADMIN_USERNAME = 'admin';

/**
 * First start on an empty database: organization "Default" (enterprise) and its owner `admin`
 * (staff). Returns the generated password when none was configured, for the caller to print once.
 */
export async function bootstrapFirstAdmin(deps: AppDeps, services: Services): Promise<{ created: boolean; generatedPassword: string | null }> {
  if (await services.orgs.any()) return { created: false, generatedPassword: null };
  const generated = deps.config.adminPassword ? null : randomBytes(18).toString('base64url');
  await services.orgs.create({
    name: DEFAULT_ORG,
    plan: 'enterprise',
    owner: {
      username: ADMIN_USERNAME,
      email: 'admin@example.com',
      password: deps.config.adminPassword ?? (generated as string),
      role: 'owner',
      isStaff: true,
    },
  });
  return { created: true, generatedPassword: generated };
}
