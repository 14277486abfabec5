// Who may read compliance rules and results, and who may change rules, packs and waivers: read by the services and the CLI.
import { operation } from '../../identity/policy';

export const COMPLIANCE_OPS = {
  rules: operation('compliance.rules', ['compliance.view'], { scope: 'none' }, { cli: 'compliance rule list' }),
  check: operation('compliance.check', ['compliance.view'], { scope: 'groups' }, { cli: 'compliance check' }),
  manage: operation('compliance.manage', ['compliance.manage'], { scope: 'none' }, { cli: 'compliance rule import' }),
  waive: operation('compliance.waive', ['compliance.manage'], { scope: 'groups' }, { cli: 'compliance waiver add' }),
} as const;
