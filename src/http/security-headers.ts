import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import helmet from 'helmet';

/**
 * Helmet's defaults, less upgrade-insecure-requests (it would break the docs pages of a plain-HTTP
 * deployment). They are the same for every response, so helmet runs once, at start, on a response
 * that is never sent, and its headers are kept in a record.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = (() => {
  const req = new IncomingMessage(new Socket());
  const res = new ServerResponse(req);
  let finished = false;
  helmet({ contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } })(req, res, () => (finished = true));
  const headers = Object.fromEntries(Object.entries(res.getHeaders()).map(([k, v]) => [k, String(v)]));
  if (!finished || !headers['content-security-policy']) throw new Error('helmet did not set its headers synchronously');
  return Object.freeze(headers);
})();
