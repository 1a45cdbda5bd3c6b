// Prints one closing line per vitest JSON report, then the total: "label: N passed, N failed, N skipped".
import fs from 'node:fs';

let passed = 0;
let failed = 0;
let skipped = 0;
for (const file of process.argv.slice(2)) {
  const label = file.replace(/^.*\//, '').replace(/\.json$/, '');
  if (!fs.existsSync(file)) {
    console.log(`${label}: 0 passed, 1 failed`);
    failed += 1;
    continue;
  }
  const r = JSON.parse(fs.readFileSync(file, 'utf8'));
  const s = r.numPendingTests + r.numTodoTests;
  console.log(`${label}: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${s} skipped`);
  passed += r.numPassedTests;
  failed += r.numFailedTests;
  skipped += s;
}
console.log(`total: ${passed} passed, ${failed} failed, ${skipped} skipped`);
