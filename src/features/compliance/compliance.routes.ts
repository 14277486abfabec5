// Public API routes for compliance rules and the fleet summary (additive to spec section 4): list, read, create, replace, delete a rule; counts.
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { actorOf, type AppEnv } from '../../http/context';
import { requirePermission } from '../../http/middleware';
import { SuccessStatusSchema, errorResponses, jsonBody, jsonResponse, pagination } from '../../http/openapi';
import { registerRoute } from '../../http/route';
import { COMPLIANCE_OPS } from './compliance.policy';
import { getRule, listRules, loadRuleset } from './compliance-rules.service';
import { createRule, deleteDatabaseRule, updateRule } from './compliance-rule-admin.service';
import { fleetCompliance, summarize } from './compliance-fleet.service';
import {
  RuleBodySchema,
  RuleIdParams,
  RuleListQuerySchema,
  RulePageSchema,
  RuleSchema,
  RuleUpdateSchema,
  SummaryQuerySchema,
  SummarySchema,
  toRuleDto,
  toSummaryDto,
} from './compliance.schemas';

const tags = ['Compliance'];
const security = [{ ApiKeyAuth: [] }];
const READ_ONLY =
  'Only rules kept in the database (made here or in the web interface, or imported with `confvault compliance rule import`) can be changed: ' +
  'a rule read from a file in `<data_dir>/compliance/` or from a shipped pack gives 409 `CONFLICT` naming where it lives.';
const REJUDGE = 'The fleet’s newest versions are judged again in the background; reads of results wait for it.';

const listRoute = createRoute({
  method: 'get',
  path: '/compliance/rules',
  operationId: 'listComplianceRules',
  tags,
  summary: 'List compliance rules',
  description: 'The rules in force (database, files, enabled packs), ordered by id. Rules are not scoped: every holder of `compliance.view` sees them all.',
  security,
  middleware: [requirePermission(COMPLIANCE_OPS.rules)] as const,
  request: { query: RuleListQuerySchema },
  responses: { 200: jsonResponse(RulePageSchema, 'One page of rules'), ...errorResponses('PERMISSION_DENIED') },
});

const getRoute = createRoute({
  method: 'get',
  path: '/compliance/rules/{rule_id}',
  operationId: 'getComplianceRule',
  tags,
  summary: 'Get a compliance rule',
  description: 'A rule in force, or a shipped pack’s rule (`in_force` false while its pack is enabled nowhere).',
  security,
  middleware: [requirePermission(COMPLIANCE_OPS.rule)] as const,
  request: { params: RuleIdParams },
  responses: { 200: jsonResponse(RuleSchema, 'The rule'), ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND') },
});

const createRuleRoute = createRoute({
  method: 'post',
  path: '/compliance/rules',
  operationId: 'createComplianceRule',
  tags,
  summary: 'Create a compliance rule',
  description: `A new database rule; it takes precedence over a file or pack rule with the same id. 409 \`CONFLICT\` when the database already holds one with its id. Audited. ${REJUDGE}`,
  security,
  middleware: [requirePermission(COMPLIANCE_OPS.createRule)] as const,
  request: { body: jsonBody(RuleBodySchema) },
  responses: {
    201: jsonResponse(RuleSchema, 'The created rule'),
    ...errorResponses('PERMISSION_DENIED', 'CONFLICT', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE'),
  },
});

const updateRuleRoute = createRoute({
  method: 'put',
  path: '/compliance/rules/{rule_id}',
  operationId: 'updateComplianceRule',
  tags,
  summary: 'Replace a compliance rule',
  description: `The whole definition is replaced (not a partial update). ${READ_ONLY} Audited. ${REJUDGE}`,
  security,
  middleware: [requirePermission(COMPLIANCE_OPS.updateRule)] as const,
  request: { params: RuleIdParams, body: jsonBody(RuleUpdateSchema) },
  responses: {
    200: jsonResponse(RuleSchema, 'The rule as now defined'),
    ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND', 'CONFLICT', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE'),
  },
});

const deleteRuleRoute = createRoute({
  method: 'delete',
  path: '/compliance/rules/{rule_id}',
  operationId: 'deleteComplianceRule',
  tags,
  summary: 'Delete a compliance rule',
  description: `${READ_ONLY} A file or pack rule of the same id, if any, is in force again. Audited. ${REJUDGE}`,
  security,
  middleware: [requirePermission(COMPLIANCE_OPS.deleteRule)] as const,
  request: { params: RuleIdParams },
  responses: { 200: jsonResponse(SuccessStatusSchema, 'The rule was deleted'), ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND', 'CONFLICT') },
});

const summaryRoute = createRoute({
  method: 'get',
  path: '/compliance/summary',
  operationId: 'getComplianceSummary',
  tags,
  summary: 'Fleet compliance summary',
  description:
    'Counts over each device’s newest stored version: devices compliant or not, results by status, by severity and by rule (most failures first). ' +
    'Only devices inside the key owner’s device-group scope are counted; ungrouped devices need scope "all". A failure under a waiver in force counts as `waived`.',
  security,
  middleware: [requirePermission(COMPLIANCE_OPS.summary)] as const,
  request: { query: SummaryQuerySchema },
  responses: { 200: jsonResponse(SummarySchema, 'The counts'), ...errorResponses('PERMISSION_DENIED') },
});

export function register(api: OpenAPIHono<AppEnv>): void {
  registerRoute(api, listRoute, (c) => {
    const { page, limit } = c.req.valid('query');
    const { db, dataDir } = c.get('app');
    const rules = listRules(db, actorOf(c), dataDir);
    const items = rules.slice((page - 1) * limit, page * limit).map((r) => toRuleDto(r, true));
    return c.json({ items, pagination: pagination(page, limit, rules.length) }, 200);
  });

  registerRoute(api, getRoute, (c) => {
    const { rule_id } = c.req.valid('param');
    const { db, dataDir } = c.get('app');
    const rule = getRule(db, actorOf(c), dataDir, rule_id);
    return c.json(toRuleDto(rule, loadRuleset(db, dataDir).info.has(rule_id)), 200);
  });

  registerRoute(api, createRuleRoute, (c) => {
    const { db, snapshots } = c.get('app');
    return c.json(toRuleDto(createRule(db, snapshots, actorOf(c), c.req.valid('json')), true), 201);
  });

  registerRoute(api, updateRuleRoute, (c) => {
    const { rule_id } = c.req.valid('param');
    const { db, snapshots } = c.get('app');
    return c.json(toRuleDto(updateRule(db, snapshots, actorOf(c), rule_id, c.req.valid('json')), true), 200);
  });

  registerRoute(api, deleteRuleRoute, (c) => {
    const { rule_id } = c.req.valid('param');
    const { db, snapshots } = c.get('app');
    deleteDatabaseRule(db, snapshots, actorOf(c), rule_id);
    return c.json({ status: 'success' as const }, 200);
  });

  registerRoute(api, summaryRoute, async (c) => {
    const { group_id, template, severity } = c.req.valid('query');
    const { db, snapshots } = c.get('app');
    const devices = await fleetCompliance(db, snapshots, actorOf(c), { groupId: group_id ?? null, template, severity });
    return c.json(toSummaryDto(summarize(devices)), 200);
  });
}
