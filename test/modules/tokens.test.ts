import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadJwtSecret } from '../../src/modules/auth/tokens.js';

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
