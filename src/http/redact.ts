/** Headers that carry credentials: never logged. */
export const SECRET_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'x-api-key', 'hibp-api-key'] as const;

/** A query parameter whose name says it may hold a credential (token, key, password, secret, ...). */
const SECRET_PARAM = /token|key|pass|pwd|secret|auth|sig|session|credential/i;

/**
 * The URL as it may be logged: the value of every query parameter whose name suggests a credential
 * is replaced by `[redacted]`, whatever a client put there. The path is kept as it is.
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const query = url.slice(q + 1);
  if (!SECRET_PARAM.test(query)) return url;
  const parts = query.split('&').map((part) => {
    const eq = part.indexOf('=');
    const name = eq < 0 ? part : part.slice(0, eq);
    let decoded = name;
    try {
      decoded = decodeURIComponent(name.replace(/\+/g, ' '));
    } catch {
      // A malformed escape: judge the name as written.
    }
    return eq >= 0 && SECRET_PARAM.test(decoded) ? `${name}=[redacted]` : part;
  });
  return `${url.slice(0, q)}?${parts.join('&')}`;
}
