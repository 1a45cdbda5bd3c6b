import { randomBytes } from 'node:crypto';
import { buildApp } from '../app.js';
import { loadConfig } from '../config.js';

/**
 * The OpenAPI document, from an app on an in-memory database that never listens: the same document
 * /api/schema/ serves, since both come from the routes' own schemas.
 */
export async function openApiDocument(): Promise<unknown> {
  // A secret of the moment: nothing is signed, and none is written to a data folder.
  const config = loadConfig({ THREATMON_DATABASE_URL: 'sqlite::memory:', THREATMON_JWT_SECRET: randomBytes(32).toString('hex'), THREATMON_LOG_LEVEL: 'silent' });
  const app = await buildApp(config, { logger: false });
  try {
    await app.ready();
    return app.swagger();
  } finally {
    await app.close();
  }
}
