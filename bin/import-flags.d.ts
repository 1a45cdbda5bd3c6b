/** The V8 flags `threatmon import-leaks` runs under (see import-flags.js). */
export declare const IMPORT_V8_FLAGS: string[];
