// The [git_mirror] section: the repository, the queue and the remotes (HTTPS with a token, or SSH with a key and a pinned host key).
import { z } from 'zod';

/** http(s):// without a user or token in it, ssh://[user@]host[:port]/path, or scp-like user@host:path. */
const GIT_REMOTE_URL = /^(https?:\/\/[^\s/@]+(\/\S*)?|ssh:\/\/([^\s/@:]+@)?([^\s/@:]+|\[[0-9A-Fa-f:.]+\])(:\d{1,5})?\/[^\s']*|[^\s/@:]+@[^\s/@:]+:[^\s']+)$/;
/** A SHA256 fingerprint, or an ssh-keyscan / known_hosts line: [host] type base64-key. */
const KNOWN_HOST = /^(SHA256:[A-Za-z0-9+/]{43}=?|(\S+\s+)?(ssh-[a-z0-9-]+|ecdsa-sha2-[a-z0-9-]+|sk-\S+)\s+[A-Za-z0-9+/]+={0,2}(\s.*)?)$/;

/** An SSH remote (ssh:// or user@host:path) rather than an HTTP(S) one. */
export function isSshRemote(url: string): boolean {
  return url.startsWith('ssh://') || /^[^/@:\s]+@[^/@:\s]+:/.test(url);
}

export const gitMirrorSchema = z
  .object({
    enabled: z.boolean().default(false),
    path: z.string().default(''),
    interval: z.number().int().min(1).max(3600).default(5),
    max_queue: z.number().int().min(1).max(10_000_000).default(100_000),
    remote: z
      .array(
        z
          .object({
            url: z
              .string()
              .regex(
                GIT_REMOTE_URL,
                'expected an http(s):// URL without a user or token in it (token_file holds the token), ssh://[user@]host[:port]/path or user@host:path',
              ),
            token_file: z.string().default(''),
            username: z.string().min(1).default('confvault'),
            ssh_key_file: z.string().default(''),
            ssh_key_passphrase_file: z.string().default(''),
            known_host: z.string().regex(KNOWN_HOST, 'expected a SHA256:... fingerprint or an ssh-keyscan line').or(z.literal('')).default(''),
            accept_any_host_key: z.boolean().default(false),
          })
          .strict()
          .refine((r) => !isSshRemote(r.url) || r.ssh_key_file !== '', { message: 'an SSH remote needs ssh_key_file', path: ['ssh_key_file'] })
          .refine((r) => !isSshRemote(r.url) || r.known_host !== '' || r.accept_any_host_key, {
            message: 'an SSH remote needs known_host (the host key pinned), or accept_any_host_key = true',
            path: ['known_host'],
          }),
      )
      .max(16)
      .default([]),
  })
  .strict()
  .prefault({});
