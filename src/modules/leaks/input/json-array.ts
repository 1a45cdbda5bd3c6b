import type { InputFormat } from './format.js';
import { parsedItems } from './parsed.js';

/** A JSON array of records, of any size, parsed as it streams. */
export const jsonArray: InputFormat = {
  name: 'json',
  title: 'a JSON array',
  numbered: false,
  recognise: (first) => (first.startsWith('[') ? {} : null),
  read: (text, options) => parsedItems(text, 'json', options),
};
