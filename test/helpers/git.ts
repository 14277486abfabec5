// git for building test repositories: no system or user configuration of the machine running the tests, a fixed author and time.
import { execFileSync } from 'node:child_process';

/** Runs git in `cwd`, committing (when it commits) at `date` (ISO 8601). */
export function git(cwd: string, args: string[], date = '2026-01-02T03:04:05Z'): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH,
      HOME: cwd,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_AUTHOR_NAME: 'old',
      GIT_AUTHOR_EMAIL: 'o@x',
      GIT_COMMITTER_NAME: 'old',
      GIT_COMMITTER_EMAIL: 'o@x',
      GIT_AUTHOR_DATE: date,
      GIT_COMMITTER_DATE: date,
    },
  });
}
