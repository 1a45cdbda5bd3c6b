import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet from 'helmet';

/**
 * Helmet's defaults, less upgrade-insecure-requests (it would break the docs pages of a plain-HTTP
 * deployment). They are the same for every response, so helmet runs once, at start, into a record.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = (() => {
  const headers: Record<string, string> = {};
  const res = {
    setHeader: (name: string, value: unknown) => void (headers[name.toLowerCase()] = String(value)),
    removeHeader: (name: string) => void delete headers[name.toLowerCase()],
  };
  let finished = false;
  helmet({ contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } })({} as IncomingMessage, res as unknown as ServerResponse, () => (finished = true));
  if (!finished || !headers['content-security-policy']) throw new Error('helmet did not set its headers synchronously');
  return Object.freeze(headers);
})();
