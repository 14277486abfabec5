// Starts the syslog receiver and event backups for `serve` when [events] syslog_listen is set.
import type { AppServices } from '../http/context';
import type { EventRunner } from './event-backups';
import { EventBackups } from './event-backups';
import { startSyslogReceiver } from './receiver';

export interface RunningEvents {
  events: EventBackups;
  udpPort: number;
  tcpPort: number;
  stop(): Promise<void>;
}

/** Null when syslog_listen is empty. A listen address that cannot be bound is logged and leaves events off. */
export async function startEventBackups(services: AppServices, runner: EventRunner): Promise<RunningEvents | null> {
  const { config, log, db } = services;
  const listen = config.events.syslog_listen;
  if (!listen) return null;
  const events = new EventBackups({ db, runner, config, log });
  await events.start();
  try {
    const receiver = await startSyslogReceiver({ listen, onMessage: (address, raw) => events.handle(address, raw) });
    log.info({ listen, udp_port: receiver.udpPort, tcp_port: receiver.tcpPort, debounce_seconds: config.events.debounce_seconds }, 'syslog receiver listening');
    return {
      events,
      udpPort: receiver.udpPort,
      tcpPort: receiver.tcpPort,
      stop: async () => {
        await receiver.close();
        await events.stop();
      },
    };
  } catch (err) {
    log.error({ err, listen }, 'syslog receiver could not bind: event-driven backups are off');
    await events.stop();
    return null;
  }
}
