// Structured JSON logs (pino) to stdout; known secret-bearing fields are censored defensively.
import pino, { type Logger } from 'pino';

export function createLogger(level: string, destination: NodeJS.WritableStream | number = 1): Logger {
  return pino(
    {
      level,
      base: { service: 'confvault' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: ['password', 'passphrase', 'private_key', 'enable_secret', 'key', 'config_text', '*.password', '*.config_text', 'headers["x-api-key"]'],
        censor: '[redacted]',
      },
      formatters: { level: (label) => ({ level: label }) },
    },
    typeof destination === 'number' ? pino.destination({ dest: destination, sync: true }) : destination,
  );
}
