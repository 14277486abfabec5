// Request and response schemas of the compliance API (they generate its OpenAPI components) and the response DTO mappings.
import path from 'node:path';
import { z } from '@hono/zod-openapi';
import { pagedSchema, paginationQuery } from '../../http/openapi';
import { formatNullable, formatTimestamp } from '../../lib/time';
import { IntQuery, TimestampSchema } from '../devices/shared.schemas';
import { SEVERITIES, complianceRuleSchema } from './compliance-rule.schemas';
import type { RuleInForce } from './compliance-rules.service';
import type { DeviceCompliance } from './compliance.service';
import type { FleetSummary, Waiver } from './compliance-fleet.service';

const EXAMPLE_RULE = {
  id: 'vty-ssh-only',
  title: 'VTY lines accept SSH only',
  description: 'Remote logins use SSH; telnet sends passwords in clear text.',
  severity: 'critical' as const,
  applies_to: { templates: ['cisco-ios'], groups: ['dc'] },
  remediation: 'line vty 0 15\n transport input ssh',
  check: { kind: 'sections' as const, match: '^line vty', must_contain: ['^transport input ssh$'], must_not_contain: ['telnet'], require_section: true },
};

export const RuleIdParams = z.object({
  rule_id: z
    .string()
    .regex(/^[a-z0-9][a-z0-9._-]{0,99}$/, 'rule_id must be a rule id (lower-case letters, digits, ".", "_" and "-")')
    .openapi({ param: { name: 'rule_id', in: 'path' }, example: 'vty-ssh-only' }),
});

/** A rule as written in a rule file (one rule), the body of POST. */
export const RuleBodySchema = complianceRuleSchema.openapi('ComplianceRuleDefinition', {
  description: 'One rule, as in a rule file (docs/compliance.md has an example of each check kind).',
  example: EXAMPLE_RULE,
});

/** The body of PUT: the rule without its id (the path names it). */
export const RuleUpdateSchema = complianceRuleSchema.omit({ id: true }).openapi('ComplianceRuleUpdate', {
  description: 'The rule’s new definition; its id is the path’s.',
  example: { ...EXAMPLE_RULE, id: undefined },
});

const ORIGINS = ['database', 'file', 'pack'] as const;

export const RuleSchema = z
  .object({
    id: z.string(),
    title: z.string(),
    severity: z.enum(SEVERITIES),
    origin: z
      .enum(ORIGINS)
      .openapi({ description: '`database`: made in the web or API (editable); `file`: a YAML file in the rules folder; `pack`: a shipped pack' }),
    location: z.string().nullable().openapi({ description: 'The file name of a file rule, the pack of a pack rule, else null' }),
    editable: z.boolean().openapi({ description: 'Whether PUT and DELETE may change it (database rules only; others give 409 CONFLICT)' }),
    in_force: z.boolean().openapi({ description: 'False for a shipped pack’s rule while its pack is enabled nowhere' }),
    definition: complianceRuleSchema,
  })
  .openapi('ComplianceRule', {
    example: {
      id: EXAMPLE_RULE.id,
      title: EXAMPLE_RULE.title,
      severity: 'critical',
      origin: 'database',
      location: null,
      editable: true,
      in_force: true,
      definition: EXAMPLE_RULE,
    },
  });

export const RulePageSchema = pagedSchema(RuleSchema, 'ComplianceRulePage');
export const RuleListQuerySchema = z.object({ ...paginationQuery(50, 500) });

export function toRuleDto(r: RuleInForce, inForce: boolean): z.infer<typeof RuleSchema> {
  return {
    id: r.written.id,
    title: r.written.title,
    severity: r.written.severity,
    origin: r.origin,
    location: r.from === null ? null : r.origin === 'file' ? path.basename(r.from) : r.from,
    editable: r.origin === 'database',
    in_force: inForce,
    definition: r.written,
  };
}

export const SummaryQuerySchema = z.object({
  group_id: IntQuery('group_id').openapi({ description: 'Only devices in this group and its subgroups' }),
  template: z.string().min(1).max(128).optional().openapi({ description: 'Only devices with this template (platform) name' }),
  severity: z.enum(SEVERITIES).optional().openapi({ description: 'Only rules of this severity' }),
});

const counts = { pass: z.number().int(), fail: z.number().int(), waived: z.number().int() };

export const SummarySchema = z
  .object({
    devices: z.object({
      judged: z.number().int().openapi({ description: 'Devices in scope with a stored version' }),
      compliant: z.number().int().openapi({ description: 'Of those, devices failing no rule (a waived failure does not count)' }),
      non_compliant: z.number().int(),
    }),
    by_status: z.object(counts),
    by_severity: z.array(z.object({ severity: z.enum(SEVERITIES), ...counts })),
    by_rule: z.array(z.object({ rule_id: z.string(), title: z.string(), severity: z.enum(SEVERITIES), ...counts })),
  })
  .openapi('ComplianceSummary', {
    example: {
      devices: { judged: 2, compliant: 1, non_compliant: 1 },
      by_status: { pass: 3, fail: 1, waived: 0 },
      by_severity: [{ severity: 'critical', pass: 1, fail: 1, waived: 0 }],
      by_rule: [{ rule_id: 'vty-ssh-only', title: 'VTY lines accept SSH only', severity: 'critical', pass: 1, fail: 1, waived: 0 }],
    },
  });

const FailingLineSchema = z.object({
  line: z.number().int().nullable().openapi({ description: '1-based line of the stored (redacted) configuration; null for something missing' }),
  text: z.string(),
  message: z.string(),
});

const ResultSchema = z.object({
  rule_id: z.string(),
  title: z.string(),
  severity: z.enum(SEVERITIES),
  status: z.enum(['pass', 'fail', 'waived']),
  failing_lines: z.array(FailingLineSchema),
  remediation: z.string().openapi({ description: 'The rule’s remediation text, then the commands generated for a golden rule' }),
  waiver: z.object({ reason: z.string(), owner: z.string(), expires_at: TimestampSchema }).nullable(),
});

export const DeviceComplianceSchema = z
  .object({
    device_id: z.number().int(),
    device_name: z.string(),
    backup_id: z.string().nullable().openapi({ description: 'The newest stored version judged; null when the device has none' }),
    backed_up_at: TimestampSchema.nullable(),
    compliant: z.boolean().openapi({ description: 'No rule fails (waived failures do not count)' }),
    results: z.array(ResultSchema).openapi({ description: 'One per rule that applies to the device, by rule id' }),
  })
  .openapi('DeviceCompliance', {
    example: {
      device_id: 1,
      device_name: 'core-sw1',
      backup_id: '0b5e8a3c-6f1d-4d2e-9a7b-2c4f1e8d9a10',
      backed_up_at: '2024-05-01 02:00:13',
      compliant: false,
      results: [
        {
          rule_id: 'vty-ssh-only',
          title: 'VTY lines accept SSH only',
          severity: 'critical',
          status: 'fail',
          failing_lines: [{ line: 42, text: ' transport input ssh telnet', message: 'must not contain telnet' }],
          remediation: 'line vty 0 15\n transport input ssh',
          waiver: null,
        },
      ],
    },
  });

export function toDeviceComplianceDto(d: DeviceCompliance | null, device: { id: number; name: string }, tz: string): z.infer<typeof DeviceComplianceSchema> {
  const results = (d?.results ?? []).flatMap((r) =>
    r.status === 'not_applicable'
      ? []
      : [
          {
            rule_id: r.rule_id,
            title: r.title,
            severity: r.severity,
            status: r.status,
            failing_lines: r.failing,
            remediation: r.remediation,
            waiver: r.waiver && { reason: r.waiver.reason, owner: r.waiver.owner, expires_at: formatTimestamp(r.waiver.expires_at, tz) },
          },
        ],
  );
  return {
    device_id: device.id,
    device_name: device.name,
    backup_id: d?.backup_id ?? null,
    backed_up_at: formatNullable(d?.backed_up_at ?? null, tz),
    compliant: !results.some((r) => r.status === 'fail'),
    results,
  };
}

export function toSummaryDto(s: FleetSummary): z.infer<typeof SummarySchema> {
  return s;
}

export const WaiverIdParams = z.object({
  waiver_id: z
    .string()
    .regex(/^[1-9]\d{0,15}$/, 'waiver_id must be a positive integer')
    .transform(Number)
    .openapi({ param: { name: 'waiver_id', in: 'path' }, type: 'integer', minimum: 1, example: 1 }),
});

export const WaiverSchema = z
  .object({
    id: z.number().int(),
    device_id: z.number().int(),
    rule_id: z.string(),
    reason: z.string(),
    owner: z.string(),
    expires_at: TimestampSchema,
    active: z.boolean().openapi({ description: 'False once expired (expired waivers are kept for the record)' }),
    created_by: z.string(),
    created_at: TimestampSchema,
  })
  .openapi('ComplianceWaiver', {
    example: {
      id: 1,
      device_id: 1,
      rule_id: 'vty-ssh-only',
      reason: 'Console server needs telnet until the migration in June',
      owner: 'netops',
      expires_at: '2024-06-30 23:59:59',
      active: true,
      created_by: 'alice',
      created_at: '2024-05-01 09:12:00',
    },
  });

export const WaiverPageSchema = pagedSchema(WaiverSchema, 'ComplianceWaiverPage');
export const WaiverListQuerySchema = z.object({ ...paginationQuery(50, 500) });

export const WaiverCreateSchema = z
  .object({
    rule_id: z.string().min(1).max(100),
    // Blank text is refused by the service ("is required"), after trimming.
    reason: z.string().min(1).max(1000),
    owner: z.string().min(1).max(200),
    expires_at: z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/, 'must be YYYY-MM-DD HH:MM:SS')
      .openapi({ description: '`YYYY-MM-DD HH:MM:SS` in the request time zone; must be in the future', example: '2030-06-30 23:59:59' }),
  })
  .strict()
  .openapi('ComplianceWaiverCreate', {
    example: { rule_id: 'vty-ssh-only', reason: 'Console server needs telnet until the migration in June', owner: 'netops', expires_at: '2030-06-30 23:59:59' },
  });

export function toWaiverDto(w: Waiver, tz: string): z.infer<typeof WaiverSchema> {
  return {
    id: w.id,
    device_id: w.device_id,
    rule_id: w.rule_id,
    reason: w.reason,
    owner: w.owner,
    expires_at: formatTimestamp(w.expires_at, tz),
    active: w.active,
    created_by: w.created_by,
    created_at: formatTimestamp(w.created_at, tz),
  };
}
