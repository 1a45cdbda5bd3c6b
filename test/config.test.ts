import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

describe('configuration', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      databaseUrl: 'sqlite:./data/threatmon.db',
      databaseKind: 'sqlite',
      redisUrl: null,
      host: '127.0.0.1',
      port: 8000,
      accessTtlSeconds: 900,
      refreshTtlSeconds: 604800,
      trustProxy: false,
      corsOrigins: [],
      metrics: false,
      rateLimits: true,
      planLimits: { starter: 100, professional: 500, enterprise: 2000 },
      workers: 1,
      principalCacheMs: 2000,
      deliveryRetentionSeconds: 2592000,
    });
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('keeps generated secrets beside the SQLite file, else in ./data, never in the working directory', () => {
    expect(loadConfig({ THREATMON_DATABASE_URL: 'sqlite:/srv/tm/threatmon.db' }).dataDir).toBe('/srv/tm');
    expect(loadConfig({ THREATMON_DATABASE_URL: 'sqlite::memory:' }).dataDir).toBe(path.resolve('data'));
    expect(loadConfig({ THREATMON_DATABASE_URL: 'postgres://u@h/db' }).dataDir).toBe(path.resolve('data'));
    expect(loadConfig({ THREATMON_DATABASE_URL: 'sqlite::memory:', THREATMON_DATA_DIR: '/var/lib/tm' }).dataDir).toBe('/var/lib/tm');
  });

  it('parses every variable', () => {
    const c = loadConfig({
      THREATMON_DATABASE_URL: 'postgres://u@h/db',
      THREATMON_REDIS_URL: 'redis://127.0.0.1:6379',
      THREATMON_PORT: '9000',
      THREATMON_ACCESS_TTL: '5m',
      THREATMON_REFRESH_TTL: '1d',
      THREATMON_TRUST_PROXY: 'true',
      THREATMON_CORS_ORIGINS: 'https://a.example, https://b.example',
      THREATMON_METRICS: 'yes',
      THREATMON_PLAN_LIMITS: 'starter=10,enterprise=99',
      THREATMON_RATE_LIMITS: 'off',
      THREATMON_LOG_LEVEL: 'WARN',
      THREATMON_WORKERS: '3',
      THREATMON_PRINCIPAL_CACHE_MS: '0',
      THREATMON_PUBLIC_URL: 'https://api.example.com/',
    });
    expect(c).toMatchObject({
      databaseKind: 'postgres',
      port: 9000,
      accessTtlSeconds: 300,
      refreshTtlSeconds: 86400,
      trustProxy: true,
      corsOrigins: ['https://a.example', 'https://b.example'],
      metrics: true,
      planLimits: { starter: 10, professional: 500, enterprise: 99 },
      rateLimits: false,
      logLevel: 'warn',
      workers: 3,
      principalCacheMs: 0,
      deliveryRetentionSeconds: 2592000,
      publicUrl: 'https://api.example.com',
    });
    expect(loadConfig({ THREATMON_WORKERS: 'auto' }).workers).toBe(os.availableParallelism());
    expect(loadConfig({}).searchCountLimit).toBe(10_000);
    expect(loadConfig({ THREATMON_SEARCH_COUNT_LIMIT: '1_000_000' }).searchCountLimit).toBe(1_000_000);
  });

  it.each([
    ['THREATMON_DATABASE_URL', 'mysql://x'],
    ['THREATMON_PORT', 'eighty'],
    ['THREATMON_PORT', '70000'],
    ['THREATMON_ACCESS_TTL', '15 minutes'],
    ['THREATMON_JWT_SECRET', 'short'],
    ['THREATMON_ADMIN_PASSWORD', 'short'],
    ['THREATMON_TRUST_PROXY', 'maybe'],
    ['THREATMON_CORS_ORIGINS', 'not a url'],
    ['THREATMON_PLAN_LIMITS', 'gold=5'],
    ['THREATMON_PLAN_LIMITS', 'starter=-1'],
    ['THREATMON_RATE_LIMITS', 'sometimes'],
    ['THREATMON_LOG_LEVEL', 'loud'],
    ['THREATMON_REDIS_URL', 'localhost:6379'],
    ['THREATMON_WORKERS', '0'],
    ['THREATMON_WORKERS', 'many'],
    ['THREATMON_PRINCIPAL_CACHE_MS', '1.5'],
    ['THREATMON_PRINCIPAL_CACHE_MS', '3600001'],
    ['THREATMON_PUBLIC_URL', 'api.example.com'],
    ['THREATMON_PUBLIC_URL', 'ftp://api.example.com'],
    ['THREATMON_PUBLIC_URL', 'https://api.example.com/?x=1'],
    ['THREATMON_SEARCH_COUNT_LIMIT', '0'],
    ['THREATMON_SEARCH_COUNT_LIMIT', 'ten thousand'],
    ['THREATMON_SEARCH_COUNT_LIMIT', '100000001'],
  ])('refuses %s=%s naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^${name}: `));
  });
});
