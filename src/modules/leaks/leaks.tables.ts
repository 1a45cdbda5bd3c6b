import type { Generated } from 'kysely';

/** The tables of the leaks module, as stored (timestamps ISO strings; booleans 0/1 on SQLite). */

export interface LeakSourcesTable {
  id: string;
  name: string;
  description: string;
  /** The breached site's domain (migration 0025). */
  domain: string | null;
  breach_date: string | null;
  discovered_at: string | null;
  /** JSON array of data classes. */
  data_classes: string;
  is_verified: boolean | number;
  /** breach, combolist, stealer_log, paste or other (migration 0022). */
  kind: Generated<string>;
  is_fabricated: Generated<boolean | number>;
  is_sensitive: Generated<boolean | number>;
  is_spam_list: Generated<boolean | number>;
  record_count: Generated<number>;
  version: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface LeakRecordsTable {
  id: string;
  source_id: string;
  email: string | null;
  username: string | null;
  username_lower: string | null;
  domain: string | null;
  domain_rev: string | null;
  ip: string | null;
  ip_key: string | null;
  phone: string | null;
  full_name: string | null;
  password_sha1: string | null;
  password_masked: string | null;
  /** JSON object of strings. */
  extra: string;
  leaked_at: string | null;
  /** 16 bytes: recordKey(source_id, content fingerprint), unique. */
  fingerprint: Uint8Array;
  search_text: string;
  /** The e-mail address's reversed domain when it is not `domain`, else null (migration 0021). */
  email_domain_rev: string | null;
  /** What the record exposes: low, medium, high or critical (migration 0023, domain/leak-record.ts recordSeverity). */
  severity: string;
  /** NTLM (MD4 of UTF-16LE) of the plaintext password, upper-case hex (migration 0025). */
  password_ntlm: string | null;
  created_at: string;
}

export interface LeakCountersTable {
  key: string;
  n: number;
}

export interface SavedSearchesTable {
  id: string;
  organization_id: string;
  name: string;
  /** JSON object of search parameters. */
  query: string;
  created_by: string | null;
  version: Generated<number>;
  created_at: string;
  updated_at: string;
  last_run_at: string | null;
  last_result_count: number | null;
}

// Its tables in the database type (db/schema.ts): each module adds its own.
declare module '../../db/schema.js' {
  interface DB {
    leak_sources: LeakSourcesTable;
    leak_records: LeakRecordsTable;
    leak_counters: LeakCountersTable;
    /** Records per reversed domain (`key`). */
    leak_domain_counts: LeakCountersTable;
    /** PostgreSQL only: every full-text lexeme of the records (migration 0008). */
    leak_words: { word: string };
    saved_searches: SavedSearchesTable;
  }
}
