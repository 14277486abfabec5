// Who may read compliance rules and results, and who may change rules, packs and waivers: read by the services, the API, the web and the CLI.
import { operation } from '../../identity/policy';

const none = { scope: 'none' } as const;
const groups = { scope: 'groups' } as const;

export const COMPLIANCE_OPS = {
  rules: operation('compliance.rules', ['compliance.view'], none, {
    api: 'GET /compliance/rules',
    web: ['GET /compliance/rules'],
    cli: 'compliance rule list',
  }),
  rule: operation('compliance.rule_get', ['compliance.view'], none, { api: 'GET /compliance/rules/{rule_id}', web: ['GET /compliance/rules/:id'] }),
  summary: operation('compliance.summary', ['compliance.view'], groups, {
    api: 'GET /compliance/summary',
    web: ['GET /compliance', 'GET /compliance/report', 'GET /compliance/report.csv'],
  }),
  check: operation('compliance.check', ['compliance.view'], groups, {
    api: 'GET /devices/{device_id}/compliance',
    web: ['GET /devices/:id/compliance'],
    cli: 'compliance check',
  }),
  waivers: operation('compliance.waivers', ['compliance.view'], groups, { api: 'GET /devices/{device_id}/compliance/waivers' }),
  manage: operation('compliance.manage', ['compliance.manage'], none, { cli: 'compliance rule import' }),
  createRule: operation('compliance.rule_create', ['compliance.manage'], none, {
    api: 'POST /compliance/rules',
    web: ['GET /compliance/rules/new', 'POST /compliance/rules'],
  }),
  updateRule: operation('compliance.rule_update', ['compliance.manage'], none, {
    api: 'PUT /compliance/rules/{rule_id}',
    web: ['GET /compliance/rules/:id/edit', 'POST /compliance/rules/:id/edit'],
  }),
  deleteRule: operation('compliance.rule_delete', ['compliance.manage'], none, {
    api: 'DELETE /compliance/rules/{rule_id}',
    web: ['POST /compliance/rules/:id/delete'],
  }),
  waive: operation('compliance.waive', ['compliance.manage'], groups, {
    api: 'POST /devices/{device_id}/compliance/waivers',
    web: ['POST /devices/:id/compliance/waivers'],
    cli: 'compliance waiver add',
  }),
  unwaive: operation('compliance.waiver_delete', ['compliance.manage'], groups, {
    api: 'DELETE /compliance/waivers/{waiver_id}',
    web: ['POST /devices/:id/compliance/waivers/:wid/delete'],
  }),
} as const;
