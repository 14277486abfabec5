// `confvault collector run` with [collector] syslog_listen: serve's syslog receiver at the site, every message handed to the forwarder.
import type { Logger } from 'pino';
import type { AppConfig } from '../config/config';
import { startSyslogReceiver } from '../events/receiver';
import { centralClientOptions, loadIdentity } from '../collector/identity';
import { SyslogForwarder } from '../collector/syslog-forward';

export interface SiteSyslog {
  forwarder: SyslogForwarder;
  /** Closes the listener and spools what was not delivered yet. */
  stop(): Promise<void>;
}

/** Null when syslog_listen is empty or the site is not enrolled (run says so); a listen address that cannot be bound is logged and leaves it off. */
export async function startSiteSyslog(config: Readonly<AppConfig>, log: Logger): Promise<SiteSyslog | null> {
  const cfg = config.collector;
  const id = loadIdentity(config.storage.data_dir);
  if (!cfg.syslog_listen || !id) return null;
  const forwarder = new SyslogForwarder({
    client: centralClientOptions(cfg, id),
    dataDir: config.storage.data_dir,
    log,
  });
  let receiver;
  try {
    receiver = await startSyslogReceiver({
      listen: cfg.syslog_listen,
      onMessage: (address, raw) => forwarder.add(address, raw),
      udpReceiveBufferBytes: config.events.udp_receive_buffer_kb * 1024,
    });
  } catch (err) {
    log.error({ err, listen: cfg.syslog_listen }, 'syslog receiver could not bind: no syslog events are forwarded');
    return null;
  }
  log.info({ listen: cfg.syslog_listen, udp_port: receiver.udpPort, tcp_port: receiver.tcpPort }, 'syslog receiver listening, forwarding to the central');
  const controller = new AbortController();
  const running = forwarder.run(controller.signal).catch((err: unknown) => log.error({ err }, 'syslog forwarder stopped'));
  return {
    forwarder,
    stop: async () => {
      await receiver.close();
      controller.abort();
      await running;
    },
  };
}
