import { describe, expect, it } from 'vitest';
import { connectionFailed } from '../src/db/corpus-slots.js';
import { serverErrorCode } from '../src/db/pg-errors.js';

describe("PostgreSQL errors: the server's or the connection's", () => {
  const fromServer = (code?: string) => Object.assign(new Error('from the server'), { severity: 'ERROR', ...(code ? { code } : {}) });

  it('gives the SQLSTATE of an error the server sent, and null when none did', () => {
    expect(serverErrorCode(fromServer('23505'))).toBe('23505');
    expect(serverErrorCode(fromServer())).toBe('');
    expect(serverErrorCode(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5999'), { code: 'ECONNREFUSED' }))).toBeNull();
    expect(serverErrorCode(null)).toBeNull();
  });

  it("tells a shard's connection failing from its statement failing", () => {
    expect(connectionFailed(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toBe(true);
    expect(connectionFailed(fromServer('57P01'))).toBe(true);
    expect(connectionFailed(fromServer('08006'))).toBe(true);
    expect(connectionFailed(fromServer('23505'))).toBe(false);
    expect(connectionFailed(fromServer())).toBe(false);
  });
});
