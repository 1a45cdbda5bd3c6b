/** Headers that carry credentials: never logged. */
export const SECRET_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'x-api-key', 'hibp-api-key'] as const;

/** A query parameter whose name says it may hold a credential (token, key, password, secret, a JWT, a code, ...). */
const SECRET_PARAM = /token|key|pass|pwd|secret|auth|sig|session|credential|jwt|refresh|access|bearer|code/i;

/** How much of a secret path segment is logged: enough to tell two apart, far too little to use. */
const KEPT_CHARACTERS = 6;

/**
 * The URL as it may be logged: the value of every query parameter whose name suggests a credential
 * is replaced by `[redacted]`, whatever a client put there (parameters split at `&` and at `;`).
 * Below each of `secretPaths` (a tracking token's `/t/`), the segment that follows is the secret:
 * only its first characters are kept.
 */
export function redactUrl(url: string, secretPaths: readonly string[] = []): string {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const kept = redactPath(path, secretPaths);
  if (q < 0) return kept;
  const query = url.slice(q + 1);
  if (!SECRET_PARAM.test(query)) return `${kept}?${query}`;
  const parts = query.split(/([&;])/).map((part) => {
    if (part === '&' || part === ';') return part;
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
  return `${kept}?${parts.join('')}`;
}

function redactPath(path: string, secretPaths: readonly string[]): string {
  const prefix = secretPaths.find((p) => path.startsWith(p));
  if (!prefix) return path;
  const end = path.indexOf('/', prefix.length);
  const segment = end < 0 ? path.slice(prefix.length) : path.slice(prefix.length, end);
  if (segment === '') return path;
  // A third of a short segment at most: never enough of it to be it.
  const shown = segment.slice(0, Math.min(KEPT_CHARACTERS, Math.floor(segment.length / 3)));
  return `${prefix}${shown}[redacted]${end < 0 ? '' : path.slice(end)}`;
}
