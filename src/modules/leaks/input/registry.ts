import { sampleLines, type Separator } from '../../../domain/dump-lines.js';
import { csv, tsv } from './csv.js';
import type { InputFormat } from './format.js';
import { jsonArray } from './json-array.js';
import { combo, stealer } from './lines.js';
import { ndjson } from './ndjson.js';

/**
 * Every input format, in the order they are asked to recognise a member's first text: a JSON
 * array or NDJSON by their first character, CSV or TSV by a header that names record fields, then
 * combolist or stealer-log lines by what most lines read as. A new format goes here.
 */
export const FORMATS: readonly InputFormat[] = [jsonArray, ndjson, tsv, csv, stealer, combo];

/** The formats' names, as `import-leaks --format` takes them. */
export const IMPORT_FORMATS: readonly string[] = FORMATS.map((f) => f.name);
export type ImportFormat = string;

export const formatNamed = (name: string): InputFormat | undefined => FORMATS.find((f) => f.name === name);

/** What a member's first text says it is (among `formats`): the format, and a separator it tells; null when none recognises it. */
export function detectFormat(sample: string, formats: readonly InputFormat[] = FORMATS): { format: string; separator?: Separator } | null {
  const first = sampleLines(sample)[0]?.trim();
  if (first === undefined) return null;
  for (const f of formats) {
    const found = f.recognise?.(first, sample);
    if (found) return { format: f.name, ...found };
  }
  return null;
}
