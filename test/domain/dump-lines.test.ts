import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { Utf8Lines } from '../../src/domain/text-lines.js';
import { detectFormat } from '../../src/modules/leaks/input/index.js';
import { detectLineFormat, parseComboLine, parseStealerLine, secretKind } from '../../src/domain/dump-lines.js';

describe('combolist lines', () => {
  it.each([':', ';', '|', '\t'] as const)('splits login and secret at the first "%s", the secret keeping the rest', (sep) => {
    expect(parseComboLine(`alice@example.com${sep}pa${sep}ss`, sep)).toEqual({ ok: true, record: { email: 'alice@example.com', password: `pa${sep}ss` } });
  });

  it('takes a login that is no e-mail as the username', () => {
    expect(parseComboLine('darkstar99:hunter2', ':')).toEqual({ ok: true, record: { username: 'darkstar99', password: 'hunter2' } });
  });

  it('keeps hashes as hashes of their kind, never as passwords; a SHA-1 as the password SHA-1', () => {
    const sha1 = '5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8';
    const md5 = '5f4dcc3b5aa765d61d8327deb882cf99';
    const sha256 = '5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8';
    const bcrypt = '$2y$10$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234';
    const argon2 = '$argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmaaJObG';
    expect(parseComboLine(`a@b.example:${sha1}`, ':')).toEqual({ ok: true, record: { email: 'a@b.example', password_sha1: sha1.toLowerCase() } });
    expect(parseComboLine(`a@b.example:${md5}`, ':')).toEqual({ ok: true, record: { email: 'a@b.example', extra: { password_hash: md5, hash_type: 'md5' } } });
    expect(parseComboLine(`a@b.example|${sha256}`, '|')).toEqual({ ok: true, record: { email: 'a@b.example', extra: { password_hash: sha256, hash_type: 'sha256' } } });
    expect(parseComboLine(`a@b.example;${bcrypt}`, ';')).toEqual({ ok: true, record: { email: 'a@b.example', extra: { password_hash: bcrypt, hash_type: 'bcrypt' } } });
    expect(parseComboLine(`a@b.example;${argon2}`, ';')).toEqual({ ok: true, record: { email: 'a@b.example', extra: { password_hash: argon2, hash_type: 'argon2' } } });
    // Hex of other lengths is an ordinary password.
    expect(secretKind('deadbeef')).toBe('plaintext');
  });

  it('gives a reason for what it cannot read', () => {
    expect(parseComboLine('no separator here', ':')).toEqual({ ok: false, reason: 'no separator ":"' });
    expect(parseComboLine(':secret', ':')).toEqual({ ok: false, reason: 'empty login' });
    expect(parseComboLine('two words:secret', ':')).toEqual({ ok: false, reason: 'login holds white space' });
  });
});

describe('stealer-log lines', () => {
  it('reads url:login:password with the URL\'s own :// , port and path', () => {
    expect(parseStealerLine('https://login.bank.example:8443/auth:jdoe:s3cr:et', ':')).toEqual({
      ok: true,
      record: { username: 'jdoe', domain: 'login.bank.example', password: 's3cr:et', extra: { url: 'https://login.bank.example:8443/auth' } },
    });
    expect(parseStealerLine('https://shop.example:8080:jdoe:pw', ':')).toMatchObject({ ok: true, record: { username: 'jdoe', domain: 'shop.example', password: 'pw' } });
    expect(parseStealerLine('http://shop.example:jdoe:pw', ':')).toMatchObject({ ok: true, record: { username: 'jdoe', domain: 'shop.example', password: 'pw' } });
  });

  it.each(['|', ';', ' ', '\t'] as const)('reads url, login and password separated by %j', (sep) => {
    expect(parseStealerLine(`https://mail.example/login${sep}jdoe${sep}pw`, sep)).toEqual({ ok: true, record: { username: 'jdoe', domain: 'mail.example', password: 'pw', extra: { url: 'https://mail.example/login' } } });
  });

  it('takes the site as the domain beside an e-mail login, and keeps an Android app in extra.app', () => {
    expect(parseStealerLine('https://portal.example/x:jane@corp.example:pw', ':')).toEqual({
      ok: true,
      record: { email: 'jane@corp.example', domain: 'portal.example', password: 'pw', extra: { url: 'https://portal.example/x' } },
    });
    expect(parseStealerLine('android://Fc0Ia-gG5rpmT_W8x1nRh1nCJ_vpHZTm3uL3xR4ge4ZUs2LV5tIrFaLMmvg89fZE-vwwAC3-XlHu_HUBcFPJ5g==@com.instagram.android/:jdoe:pw', ':')).toEqual({
      ok: true,
      record: { username: 'jdoe', password: 'pw', extra: { app: 'com.instagram.android' } },
    });
    // An IP address or a bare host is no domain: the URL alone keeps it.
    expect(parseStealerLine('http://192.0.2.7/admin:root:toor', ':')).toEqual({ ok: true, record: { username: 'root', password: 'toor', extra: { url: 'http://192.0.2.7/admin' } } });
  });

  it('rejects lines of other layouts instead of guessing', () => {
    expect(parseStealerLine('URL: https://a.example', ':')).toEqual({ ok: false, reason: 'not a stealer-log line (url, login, password)' });
    expect(parseStealerLine('https://a.example/login:onlylogin', ':')).toEqual({ ok: false, reason: 'no password after the login' });
  });
});

describe('format detection', () => {
  it('tells combolists, their separator, and stealer logs from their lines', () => {
    expect(detectLineFormat(['a@b.example;x:y', 'c@d.example;pw', 'e@f.example;z'])).toEqual({ format: 'combo', separator: ';' });
    expect(detectLineFormat(['a@b.example:x', 'junk', 'c@d.example:y'])).toEqual({ format: 'combo', separator: ':' });
    expect(detectLineFormat(['https://a.example|u|p', 'https://b.example/x|u2|p2'])).toEqual({ format: 'stealer', separator: '|' });
    expect(detectLineFormat(['hello world', 'nothing here'])).toBeNull();
  });

  it('tells JSON, NDJSON, CSV and TSV by their content', () => {
    expect(detectFormat('[{"email":"a@b.example"}]')?.format).toBe('json');
    expect(detectFormat('\n{"email":"a@b.example"}\n')?.format).toBe('ndjson');
    expect(detectFormat('email,password,city\na@b.example,pw,Paris\n')?.format).toBe('csv');
    expect(detectFormat('username\tpassword\nbob\tpw\n')?.format).toBe('tsv');
    expect(detectFormat('# comment\nhttps://a.example:u:p\nhttps://b.example:v:q\n')).toEqual({ format: 'stealer', separator: ':' });
  });
});

describe('encodings', () => {
  const through = (chunks: Buffer[]) => {
    const lines = new Utf8Lines();
    const out = Buffer.concat([...chunks.map((c) => lines.push(c)), lines.end()]).toString('utf8');
    return { out, windows1252: lines.windows1252Lines };
  };

  it('drops a UTF-8 BOM and keeps UTF-8 as it is, cut anywhere', () => {
    const text = Buffer.from('\ufeffjosé@ex.example:mañana\r\nb@ex.example:x\n', 'utf8');
    expect(through([text.subarray(0, 7), text.subarray(7, 9), text.subarray(9)])).toEqual({ out: 'josé@ex.example:mañana\r\nb@ex.example:x\n', windows1252: 0 });
  });

  it('decodes UTF-16 LE and BE with a BOM', () => {
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('zoë@ex.example:€uro\n', 'utf16le')]);
    expect(through([le.subarray(0, 5), le.subarray(5)]).out).toBe('zoë@ex.example:€uro\n');
    const be = Buffer.from('zoë@ex.example:€uro\n', 'utf16le').swap16();
    expect(through([Buffer.concat([Buffer.from([0xfe, 0xff]), be])]).out).toBe('zoë@ex.example:€uro\n');
  });

  it('reads a line that is not UTF-8 as Windows-1252, and counts it', () => {
    const latin = iconv.encode('renée@ex.example:café€\n', 'win1252');
    const utf8 = Buffer.from('b@ex.example:ok\n');
    expect(through([utf8, latin, utf8])).toEqual({ out: 'b@ex.example:ok\nrenée@ex.example:café€\nb@ex.example:ok\n', windows1252: 1 });
  });
});
