/**
 * The leak pipeline's way in: input formats (one file each, listed in registry.ts), the one
 * opener both doors use (openInput), and the files and members a dump comes in (members.ts).
 */
export type { InputFormat, ReadOptions } from './format.js';
export { type IngestItem, type IngestItems, type InputItem, lineResult, MalformedLine, recordResult } from './items.js';
export { DEFAULT_EXPANSION, ExpansionLimit, type ExpansionLimits, type InputMember, inputMembers, type ReadPosition } from './members.js';
export { MAX_NDJSON_LINE_BYTES, NdjsonLines, ndjsonItems } from './ndjson.js';
export { within } from './within.js';
export { openInput, type OpenOptions, UnknownLineFormat } from './open.js';
export { csvRowToRecord, MAX_ITEM_BYTES, parsed, readItems } from './parsed.js';
export { detectFormat, FORMATS, formatNamed, IMPORT_FORMATS, type ImportFormat } from './registry.js';
