// Entry of the executable (build/build.mjs). `confvault serve` runs the whole program, shipped as a bundle of its own
// (src/main.ts with the web interface, the API and the docs page); every other command runs from this smaller bundle,
// which holds none of that code, so a CLI run does not read it (docs/benchmarks.md, "A CLI round and its memory").
import { runShippedProgram } from './runtime/shipped-program';

if (process.argv[2] !== 'serve' || !runShippedProgram()) void import('./main');
