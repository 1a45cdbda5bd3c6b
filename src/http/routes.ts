import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance, FastifyPluginAsync, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';

/** The Fastify instance every route plugin is registered on (TypeBox validates and types it). */
export type ApiInstance = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

/** A plugin bound to its options: what a module hands app.ts to register, with no cast on the way. */
export interface BoundPlugin {
  register(app: ApiInstance): Promise<void>;
}

/**
 * Binds `plugin` to `options`. The options' type comes from the plugin alone (NoInfer), so tsc
 * refuses options that lack what the plugin takes.
 */
export function bind<O extends object>(plugin: FastifyPluginAsync<O, RawServerDefault, TypeBoxTypeProvider>, options: NoInfer<O>): BoundPlugin {
  return {
    async register(app) {
      await app.register(plugin, options);
    },
  };
}
