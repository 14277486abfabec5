// Who may read the audit trail, read by the web page and the CLI.
import { operation } from '../../identity/policy';

export const AUDIT_OPS = {
  list: operation('audit.list', ['audit.view'], { scope: 'groups' }, { api: 'GET /audit', web: ['GET /audit'], cli: 'audit list' }),
} as const;
