export const SEVERITIES = ['critical', 'high', 'medium', 'low'] as const;
export const SEVERITY_COLOURS: Record<string, string> = { critical: '#a4161a', high: '#c8553d', medium: '#b7791f', low: '#2f6f8f' };

/** A list query from a record of filters: empty values left out. */
export function query<T extends Record<string, unknown>>(filters: T): { [K in keyof T]?: Exclude<T[K], ''> } {
  return Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== '' && v !== undefined && v !== null)) as never;
}

export const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString()} ${n === 1 ? one : many}`;
