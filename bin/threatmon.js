#!/usr/bin/env node
// The installed CLI runs the compiled code (npm ci builds it through the prepare script).

// import-leaks streams files of any size, under IMPORT_V8_FLAGS (a bounded heap; see there): the
// command re-runs itself once with those flags, unless a heap limit was given.
import { IMPORT_V8_FLAGS } from './import-flags.js';

const heapFlag = (s) => /--max-old-space-size/.test(s ?? '');
if (process.argv[2] === 'import-leaks' && !process.execArgv.some(heapFlag) && !heapFlag(process.env.NODE_OPTIONS)) {
  const { spawn } = await import('node:child_process');
  // An IPC channel, only so that the import knows when this process is gone (see below).
  const child = spawn(process.execPath, [...process.execArgv, ...IMPORT_V8_FLAGS, ...process.argv.slice(1)], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, THREATMON_IMPORT_LAUNCHER: String(process.pid) },
  });
  // Ctrl-C signals the terminal's whole process group, the import too, which stops gracefully
  // (storing what it has read): this process waits for it instead of ending first. SIGTERM, which
  // a process manager may send to this process alone, is passed on (the import takes a repeated
  // SIGTERM as the same request).
  process.on('SIGINT', () => {});
  process.on('SIGTERM', () => child.kill('SIGTERM'));
  child.on('exit', (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else {
      process.exit(code ?? 1);
    }
  });
} else {
  // Launched by the branch above: the import ends with this launcher. A kill -9 of the PID the shell
  // holds (the launcher's) closes the channel, and the import stops at once as if killed itself
  // (what it committed stays; a bulk load is finished by the next import or threatmon serve).
  if (process.env.THREATMON_IMPORT_LAUNCHER && process.channel) {
    delete process.env.THREATMON_IMPORT_LAUNCHER;
    process.channel.unref();
    process.on('disconnect', () => process.kill(process.pid, 'SIGKILL'));
  }
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
}
