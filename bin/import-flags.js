// The V8 flags `threatmon import-leaks` runs under: bin/threatmon.js re-runs the command with them,
// and the benchmarks run their imports with them.
//
// With a bounded heap (old space 128 MB, young space 8 MB per half) V8 collects early and the
// process stays bounded whatever the file, instead of letting garbage grow the heap first. The
// collector runs on the thread that allocates (no helper threads): on two cores its helpers took
// the reader thread's core while it waited for them (at 10M over three shards 55 cpu-s of helpers,
// the load 188 -> 148 s without them; see docs/SCALING.md).
export const IMPORT_V8_FLAGS = ['--max-old-space-size=128', '--max-semi-space-size=8', '--single-threaded-gc'];
