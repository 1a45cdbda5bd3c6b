/**
 * What a service may know of the HTTP request it acts for: the client's address and what it sent.
 * Services and hooks take this, never the framework's request.
 */
export interface ClientRequest {
  /** The client's address (X-Forwarded-For only with THREATMON_TRUST_PROXY). */
  ip: string;
  method: string;
  /** The path and query as sent. */
  url: string;
  headers: Readonly<Record<string, string | string[] | undefined>>;
}
