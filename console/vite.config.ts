import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';

const OUT = path.resolve(import.meta.dirname, '../dist/console');

/** Each asset also as .br and .gz beside it: @fastify/static serves the one the browser takes. */
function precompress(): Plugin {
  return {
    name: 'threatmon-precompress',
    apply: 'build',
    closeBundle() {
      const dir = path.join(OUT, 'assets');
      for (const name of readdirSync(dir)) {
        if (!/\.(js|css|svg|json)$/.test(name)) continue;
        const body = readFileSync(path.join(dir, name));
        writeFileSync(path.join(dir, `${name}.br`), brotliCompressSync(body));
        writeFileSync(path.join(dir, `${name}.gz`), gzipSync(body, { level: 9 }));
      }
    },
  };
}

export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  plugins: [precompress()],
  build: {
    outDir: OUT,
    emptyOutDir: true,
    // No inline scripts or data: modules: the page's CSP allows scripts from this origin only.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    reportCompressedSize: false,
  },
});
