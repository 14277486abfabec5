// Runs the simulators as their own process (a benchmark gives them a core of their own); usage in test/sim/README.md.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadTranscript, startSimulator, type SimDevice, type Transcript } from './simulator';
import { startTelnetSimulator } from './telnet-sim';

function args(): Map<string, string> {
  const out = new Map<string, string>();
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    if (argv[i].startsWith('--')) out.set(argv[i].slice(2), argv[i + 1] && !argv[i + 1].startsWith('--') ? argv[++i] : 'true');
  }
  return out;
}

function transcriptFiles(spec: string): string[] {
  return spec.split(',').flatMap((p) =>
    statSync(p).isDirectory()
      ? readdirSync(p)
          .filter((f) => f.endsWith('.json'))
          .sort()
          .map((f) => path.join(p, f))
      : [p],
  );
}

const a = args();
// The devices' own side, standing in for hardware that would not share this host: thousands of sessions a minute make
// the throws caught inside Node's crypto key checks (ssh2's packets before the handshake's keys are swapped, its stream
// ends) and the shell's end-of-session throw capture stack traces nobody reads, a few per cent of the simulators' CPU in
// the fleet and collectors benches. --stack-traces keeps them (for debugging the simulator).
if (!a.has('stack-traces')) Error.stackTraceLimit = 0;
const defaultDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'transcripts');
const transcripts: Transcript[] = transcriptFiles(a.get('transcripts') ?? defaultDir).map(loadTranscript);
if (transcripts.length === 0) throw new Error('no transcripts found');
const count = Number(a.get('devices') ?? 1000);
// A slice of a larger fleet served by several processes: devices first+1 … first+count, named and given
// transcripts as the whole fleet in one process would be.
const first = Number(a.get('first') ?? 0);
const latency = Number(a.get('latency-ms') ?? 0);
const devices: SimDevice[] = Array.from({ length: count }, (_, i) => {
  const name = `dev${String(first + i + 1).padStart(4, '0')}`;
  return { name, hostname: name, transcript: transcripts[(first + i) % transcripts.length], latency_ms: latency };
});

const sim = await startSimulator({ devices, port: Number(a.get('port') ?? 0) });
const telnet = a.has('telnet-port') ? await startTelnetSimulator({ devices, port: Number(a.get('telnet-port')) }) : null;
process.stdout.write(
  JSON.stringify({
    host: sim.host,
    port: sim.port,
    telnet_port: telnet?.port ?? null,
    host_key_fingerprint: sim.hostKeyFingerprint,
    devices: devices.map((d) => ({
      name: d.name,
      template: d.transcript.template,
      password: d.transcript.password,
      enable_secret: d.transcript.enable?.password ?? null,
    })),
  }) + '\n',
);
const stop = async () => {
  await Promise.all([sim.close(), telnet?.close()]);
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
