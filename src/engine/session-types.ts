// The session driver's contracts: the byte stream it talks over, its options, and the steps of a wait.
import type { CollectError } from './types';
import type { SessionVocabulary } from './prompts';

/** The transport side of a session: SSH shell channel or Telnet socket with option negotiation already removed. */
export interface TerminalStream {
  write(text: string): void;
  onData(listener: (chunk: Buffer) => void): void;
  onClose(listener: () => void): void;
  close(): void;
}

export interface SessionOptions {
  /** "host:port", for messages. */
  where: string;
  /** What Enter sends: "\n" over an SSH PTY, "\r\n" over Telnet. */
  newline: string;
  login_timeout_ms: number;
  command_timeout_ms: number;
  max_output_bytes: number;
  signal?: AbortSignal;
  /** How long the line must stay quiet before a prompt that is not an exact match is believed. */
  settle_ms?: number;
  /** How long a quiet, unrecognised last line waits before Enter is sent to see whether it comes back. */
  nudge_ms?: number;
  /** Prompts, pagers and refusal lines: the template's (sessionVocabulary) or, absent, the engine defaults. */
  vocabulary?: SessionVocabulary;
  /** Told the size of every chunk received, as it arrives (the capture memory budget accounts them). */
  onReceived?: (bytes: number) => void;
}

/** One step of a wait: finished, look again after a delay, or wait for more data. */
export type WaitStep<T> = { done: T } | { retry_ms: number } | null;

export interface WaitOptions {
  idle_ms: number;
  total_ms?: number;
  onIdle: () => CollectError;
  onClose: () => CollectError;
}
