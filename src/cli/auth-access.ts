// The end of `auth test-ldap` and `auth test-oidc`: what the matching mapping entry gives.
import type { DirectoryAccess } from '../features/directory/directory.service';
import { out } from './common';

/** The end of test-ldap's and test-oidc's output: role and scope, or why refused; the exit code (0 matched, 1 refused). */
export function printAccess(access: DirectoryAccess): number {
  if (!access.ok) {
    out(`result: refused (${access.detail})`);
    return 1;
  }
  out(`role: ${access.role}`);
  out(`scope: ${access.groups === null ? 'all' : access.match.mapping.scope.join(', ')}`);
  out('result: matched');
  return 0;
}
