// Starts the syslog receiver and event backups for `serve` when [events] syslog_listen is set.
import type { AppServices, CollectorEventSink } from '../http/context';
import type { EventRunner } from './event-backups';
import { EventBackups } from './event-backups';
import { metricsOf } from '../features/metrics/metrics.service';
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
    const requested = config.events.udp_receive_buffer_kb * 1024;
    const receiver = await startSyslogReceiver({
      listen,
      onMessage: (address, raw) => events.handle(address, raw),
      udpReceiveBufferBytes: requested,
    });
    const buffer = { udp_receive_buffer_kb: config.events.udp_receive_buffer_kb, udp_receive_buffer_granted_kb: Math.round(receiver.udpReceiveBuffer / 1024) };
    log.info(
      { listen, udp_port: receiver.udpPort, tcp_port: receiver.tcpPort, debounce_seconds: config.events.debounce_seconds, ...buffer },
      'syslog receiver listening',
    );
    // Linux reports twice what it granted, and grants at most net.core.rmem_max: less than asked means it was capped.
    if (receiver.udpReceiveBuffer < requested) {
      log.warn(buffer, 'syslog UDP receive buffer smaller than [events] udp_receive_buffer_kb: raise the sysctl net.core.rmem_max');
    }
    metricsOf(db)?.watchSyslog({
      messages: () => ({ udp: receiver.stats.udp_messages, tcp: receiver.stats.tcp_messages }),
      udpDrops: receiver.udpDrops,
      udpReceiveBufferBytes: receiver.udpReceiveBuffer,
    });
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

export interface RunningCollectorEvents {
  sink: CollectorEventSink;
  /** The event backups collectors' messages go to (null until the first forwarded batch, when there is no local receiver). */
  events(): EventBackups | null;
  stop(): Promise<void>;
}

/**
 * The central's side of syslog forwarded by collectors (POST /collector/v1/events): the local receiver's event backups
 * when `serve` runs one (one matcher, one debounce per device), else event backups started at the first forwarded batch
 * (so a central whose collectors forward nothing never loads or resolves the inventory for it).
 */
export function startCollectorEvents(services: AppServices, runner: EventRunner, local: EventBackups | null): RunningCollectorEvents {
  let own: Promise<EventBackups> | null = null;
  const events = (): Promise<EventBackups> => {
    if (local) return Promise.resolve(local);
    own ??= (async () => {
      const e = new EventBackups({ db: services.db, runner, config: services.config, log: services.log });
      await e.start();
      return e;
    })().catch((err: unknown) => {
      own = null; // the next batch tries again (the collector spools this one)
      throw err;
    });
    return own;
  };
  let started: EventBackups | null = local;
  return {
    sink: {
      async accept(zone, messages) {
        const e = await events();
        started = e;
        return e.handleForwarded(zone, messages);
      },
    },
    events: () => started,
    // The local receiver's event backups are stopped with the receiver.
    stop: async () => {
      if (own) await (await own).stop();
    },
  };
}
