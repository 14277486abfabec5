// Reads another tool's git repository without letting it run anything: fixed configuration, clean environment, owner check.
import { execFileSync } from 'node:child_process';
import { realpathSync, statSync } from 'node:fs';
import { ApiError } from '../../errors';

/**
 * Configuration given on the command line wins over the repository's own, so every setting through which a
 * repository's config (or an included file) could start a program is pinned here. Only protected (command-line)
 * configuration is read besides the repository's: GIT_CONFIG_NOSYSTEM and GIT_CONFIG_GLOBAL below.
 */
const PINNED_CONFIG: readonly string[] = [
  'core.fsmonitor=false',
  'core.hooksPath=/dev/null',
  'core.pager=cat',
  'core.editor=false',
  'core.askPass=',
  'core.sshCommand=false',
  'core.alternateRefsCommand=',
  'core.attributesFile=/dev/null',
  'core.untrackedCache=false',
  'credential.helper=',
  'sequence.editor=false',
  'pager.log=false',
  'pager.show=false',
  'pager.cat-file=false',
  'log.showSignature=false',
  'gpg.program=false',
  'gpg.openpgp.program=false',
  'gpg.ssh.program=false',
  'gpg.x509.program=false',
  'diff.external=',
  'color.ui=false',
  'protocol.allow=never',
];

/** Flags of `git log` that keep it from verifying signatures or running diff helpers whatever the config says. */
export const SAFE_LOG_FLAGS: readonly string[] = ['--no-show-signature', '--no-ext-diff', '--no-textconv', '--no-color', '--no-decorate'];

/** The environment git runs with: nothing inherited that names a program, a directory or extra configuration. */
function cleanEnv(): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/',
    LANG: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_PAGER: 'cat',
    GIT_OPTIONAL_LOCKS: '0',
  };
}

export interface GitReader {
  /** Runs one read-only git command in the repository and returns its stdout. */
  run(args: string[]): string;
  /** run() returning stdout as bytes (blobs: decoded by lib/decode.ts, not assumed UTF-8). */
  runBytes(args: string[]): Buffer;
  /** The repository's absolute path. */
  repo: string;
}

function notRepository(repo: string): ApiError {
  return ApiError.validation([{ field: 'repo', message: 'not a git repository' }], `${repo} is not a git repository`);
}

/**
 * Opens a repository for reading. One owned by another user (the old tool's, typically) is refused unless
 * `trustOwner` is given: its configuration is that user's, and reading it is a decision the operator makes.
 */
export function openGitRepository(repoPath: string, opts: { trustOwner?: boolean } = {}): GitReader {
  let repo: string;
  let uid: number;
  try {
    repo = realpathSync(repoPath);
    uid = statSync(repo).uid;
  } catch {
    throw notRepository(repoPath);
  }
  const me = process.getuid?.();
  const foreign = me !== undefined && uid !== me;
  if (foreign && !opts.trustOwner) {
    throw new ApiError(
      'PERMISSION_DENIED',
      `${repo} is owned by another user (uid ${uid}); its git configuration could run programs as you. ` +
        'Check the repository, then run again with --trust-owner (its configuration stays overridden).',
      { repo, owner_uid: uid },
    );
  }
  // Only this one path is marked safe, and only for the owner the operator accepted.
  const base = foreign ? ['-c', `safe.directory=${repo}`] : [];
  const pinned = PINNED_CONFIG.flatMap((kv) => ['-c', kv]);
  const runBytes = (args: string[]): Buffer =>
    execFileSync('git', [...base, ...pinned, '-C', repo, ...args], {
      maxBuffer: 512 * 1024 * 1024,
      env: cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  const reader: GitReader = { repo, run: (args) => runBytes(args).toString('utf8'), runBytes };
  try {
    reader.run(['rev-parse', '--git-dir']);
  } catch {
    throw notRepository(repoPath);
  }
  return reader;
}
