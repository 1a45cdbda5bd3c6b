#!/usr/bin/env node
// The installed CLI runs the compiled code (npm ci builds it through the prepare script).
import('../dist/cli/main.js').then(
  (cli) => cli.main(),
  (err) => {
    if (err && err.code === 'ERR_MODULE_NOT_FOUND') {
      console.error('threatmon is not built yet: run `npm run build` first.');
      process.exit(1);
    }
    throw err;
  },
);
