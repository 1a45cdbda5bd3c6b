import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadJwtSecret, TokenService } from '../../src/modules/identity/tokens.js';

describe('JWT secret', () => {
  it('uses THREATMON_JWT_SECRET when set', () => {
    expect(Buffer.from(loadJwtSecret({ jwtSecret: 'x'.repeat(40), dataDir: '/nonexistent' })).toString()).toBe('x'.repeat(40));
  });

  it('generates one in the data folder with mode 0600 and keeps it across restarts', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'threatmon-secret-'));
    const dataDir = path.join(dir, 'data');
    const first = loadJwtSecret({ jwtSecret: null, dataDir });
    const file = path.join(dataDir, 'jwt-secret');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(first.length).toBeGreaterThanOrEqual(64);
    expect(Buffer.from(loadJwtSecret({ jwtSecret: null, dataDir })).equals(Buffer.from(first))).toBe(true);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('TokenService.verify', () => {
  const config = { jwtIssuer: 'threatmon', jwtAudience: 'threatmon-api', accessTtlSeconds: 60, refreshTtlSeconds: 600 };
  const subject = { userId: 'u1', orgId: 'o1', role: 'admin' };

  it('remembers a verified token but still expires it, checks its type, and never trusts a forged one', async () => {
    let now = new Date('2026-01-01T00:00:00Z');
    let ids = 0;
    const tokens = new TokenService(new TextEncoder().encode('k'.repeat(40)), config, () => now, () => `jti-${++ids}`);
    const { token } = await tokens.sign(subject, 'access');
    expect((await tokens.verify(token, 'access')).sub).toBe('u1');
    // Second time from the cache: same claims, and the type check still applies.
    expect((await tokens.verify(token, 'access')).jti).toBe('jti-1');
    await expect(tokens.verify(token, 'refresh')).rejects.toMatchObject({ code: 'token_invalid' });
    // Another key's token with the same claims is refused (the cache is keyed by the whole string).
    const other = new TokenService(new TextEncoder().encode('z'.repeat(40)), config, () => now, () => 'jti-1');
    const forged = (await other.sign(subject, 'access')).token;
    await expect(tokens.verify(forged, 'access')).rejects.toMatchObject({ code: 'token_invalid' });
    // Past exp + 30 s leeway the cached entry no longer answers.
    now = new Date(now.getTime() + 91_000);
    await expect(tokens.verify(token, 'access')).rejects.toMatchObject({ code: 'token_expired' });
  });
});
