import type { FastifyRequest } from 'fastify';
import type { ClientRequest } from '../domain/client-request.js';

/** The request as a service sees it (see ClientRequest). */
export const clientOf = (request: FastifyRequest): ClientRequest => ({ ip: request.ip, method: request.method, url: request.url, headers: request.headers });
