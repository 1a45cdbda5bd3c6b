import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { Hooks } from '../../runtime/hooks.js';
import type { AppHooks, IocIntel } from '../hooks.js';
import type { IocOut } from './incidents.schemas.js';

export type IocWithIntel = IocOut & { feed_matches: IocIntel[] };

/**
 * IOCs as their incident shows them: each with what intelligence feeds say of the same value, read
 * at the moment (so a feed's later word, a new indicator or a revocation, shows at the next read).
 */
export function iocIntel(hooks: Hooks<Pick<AppHooks, 'incidents.intel'>>, db: () => Kysely<DB>) {
  return async (orgId: string, iocs: IocOut[]): Promise<IocWithIntel[]> => {
    const [lookup] = hooks.of('incidents.intel');
    const found = lookup && iocs.length ? await lookup(db(), orgId, iocs) : new Map<string, IocIntel[]>();
    return iocs.map((ioc) => ({ ...ioc, feed_matches: found.get(`${ioc.type}\u0000${ioc.value}`) ?? [] }));
  };
}
