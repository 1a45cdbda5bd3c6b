/**
 * The seams between modules, in one typed registry: a module that publishes a hook names it in the
 * app's hook map with its handlers' signature and calls `of(name)`'s handlers; a module that takes
 * part subscribes with `on(name, handler)` in its own index.ts. Handlers run in subscription order.
 */
export class Hooks<M extends { [K in keyof M]: (...args: never[]) => unknown }> {
  private readonly handlers: { [K in keyof M]?: Array<M[K]> } = {};

  /** Subscribes `handler` to `name`; the function returned unsubscribes it. */
  on<K extends keyof M>(name: K, handler: M[K]): () => void {
    const list: Array<M[K]> = (this.handlers[name] ??= []);
    list.push(handler);
    return () => {
      const i = list.indexOf(handler);
      if (i >= 0) list.splice(i, 1);
    };
  }

  /** The handlers of `name`, in subscription order (none: an empty list). */
  of<K extends keyof M>(name: K): ReadonlyArray<M[K]> {
    return this.handlers[name] ?? [];
  }
}
