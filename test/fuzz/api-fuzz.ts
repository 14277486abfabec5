// `npm run fuzz`: the suite's OpenAPI-driven fuzzer at length, against a fresh appliance; prints the seed, the statuses and every failure.
import { parseArgs } from 'node:util';
import { startTestAppliance } from '../helpers/appliance';
import { OpenApiFuzzer, prepareFuzz } from '../helpers/openapi-fuzz';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '50000' },
    seed: { type: 'string' },
    concurrency: { type: 'string', default: '8' },
  },
});
const requests = Number(values.requests);
const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
if (!Number.isInteger(requests) || requests < 1 || !Number.isInteger(seed)) {
  console.error('usage: npm run fuzz -- [--requests N] [--seed S] [--concurrency C]');
  process.exit(2);
}

const t = await startTestAppliance();
try {
  const { doc, keys, ids } = await prepareFuzz(t);
  const began = Date.now();
  console.log(`fuzzing ${t.url}/api/v1 with ${requests} requests, seed ${seed} (repeat a run with --seed ${seed})`);
  const report = await new OpenApiFuzzer({ baseUrl: t.url, doc, keys, ids, seed, requests, concurrency: Number(values.concurrency) }).run();
  const seconds = (Date.now() - began) / 1000;
  for (const [label, n] of [...report.statuses].sort()) console.log(`${String(n).padStart(7)}  ${label}`);
  console.log(`${report.requests} requests in ${seconds.toFixed(1)} s, ${report.failures.length} failures`);
  for (const f of report.failures.slice(0, 50)) console.log(`FAIL ${f}`);
  process.exitCode = report.failures.length ? 1 : 0;
} finally {
  await t.close();
}
