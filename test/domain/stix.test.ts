import { describe, expect, it } from 'vitest';
import { stixPattern, uriOf } from '../../src/domain/stix.js';

// RFC 3986: a URI holds unreserved and reserved characters, and % only as the start of an escape.
const URI = /^(?:[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]|%[0-9A-F]{2})*$/;

describe('STIX url patterns', () => {
  it('percent-encodes what a URI may not hold, as UTF-8 bytes, and keeps what is valid', () => {
    expect(uriOf('http://evil.example/a\\b')).toBe('http://evil.example/a%5Cb');
    expect(uriOf('http://evil.example/caf\u00e9 x')).toBe('http://evil.example/caf%C3%A9%20x');
    expect(uriOf('http://evil.example/\u{1d11e}')).toBe('http://evil.example/%F0%9D%84%9E');
    expect(uriOf('http://evil.example/50%/ok%20already?q=[1]&r=\'x\'#f')).toBe("http://evil.example/50%25/ok%20already?q=[1]&r='x'#f");
    for (const value of ['http://a.example/\\"<>{}|^`', 'hxxp://x/\u00fc\u00df', 'http://x/%zz%4']) expect(uriOf(value)).toMatch(URI);
  });

  it('writes url patterns with the URI form, escaped as a STIX string', () => {
    expect(stixPattern('url', "http://evil.example/a\\b'c")).toBe("[url:value = 'http://evil.example/a%5Cb\\'c']");
    expect(stixPattern('domain', 'evil.example')).toBe("[domain-name:value = 'evil.example']");
  });
});
