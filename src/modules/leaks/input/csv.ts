import { RECORD_FIELDS } from '../../../domain/leak-record.js';
import type { InputFormat } from './format.js';
import { parsedItems } from './parsed.js';

/** A CSV or TSV header names record fields among its columns (the first line, quotes and case aside). */
const headerOf = (delimiter: string) => (first: string) => {
  const columns = first.split(delimiter).map((c) => c.trim().replace(/^"|"$/g, '').toLowerCase());
  return columns.length >= 2 && columns.some((c) => (RECORD_FIELDS as readonly string[]).includes(c)) ? {} : null;
};

/** CSV with a header (or `--columns`): columns named after record fields fill them, the rest go to `extra`. */
export const csv: InputFormat = { name: 'csv', title: 'CSV', numbered: false, recognise: headerOf(','), read: (text, options) => parsedItems(text, 'csv', options) };

/** The same, tab-separated. */
export const tsv: InputFormat = { name: 'tsv', title: 'TSV', numbered: false, recognise: headerOf('\t'), read: (text, options) => parsedItems(text, 'tsv', options) };
