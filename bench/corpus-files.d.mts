export function corpusFiles(dir: string): string[];
export function corpusSourceName(file: string): string;
export function corpusHead(file: string, bytes?: number): string;
export function corpusFile(dir: string, source: string): string;
