// The appliance's HTTP server as `confvault serve` builds it, in its own process, on the seeded data dir (no scheduler: it would back up 10,000 fake devices).
import { openAppliance } from '../../src/app/bootstrap';
import { createLogger } from '../../src/lib/logger';
import { loadConfig } from '../../src/config/config';
import { closeInterruptedBackups } from '../../src/features/backups/backups.store';
import { createApp } from '../../src/app/app';
import { buildServices } from '../../src/app/services';
import type { AppServices } from '../../src/http/context';
import { startServer } from '../../src/app/server';
import { reportFatal, sendToParent } from './common';

async function main(): Promise<void> {
  const dataDir = process.argv[2];
  if (!dataDir) throw new Error('usage: api-server.ts DATA_DIR');
  // The appliance's defaults (log level info: one access-log line per request, written to this process's stdout).
  const config = loadConfig({ dataDir, listen: '127.0.0.1:0' }, { CONFVAULT_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info' });
  const log = createLogger(config.log.level);
  const a = openAppliance({}, config);
  closeInterruptedBackups(a.db, Date.now());
  const services: AppServices = buildServices({ db: a.db, config, log, secrets: a.secrets, dataDir: a.dataDir, snapshots: a.snapshots });
  const server = await startServer(createApp(services), config);
  process.once('SIGTERM', () => {
    void server.close().then(() => {
      a.close();
      process.exit(0);
    });
  });
  await sendToParent({ url: server.url });
}

main().catch(reportFatal);
