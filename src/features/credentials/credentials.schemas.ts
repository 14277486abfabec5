// Request and response schemas of the credential endpoints (the OpenAPI components), and the response converter.
import { z } from '@hono/zod-openapi';
import { MAX_ID, paginationQuery, pagedSchema } from '../../http/openapi';
import { NAME_RULES, descriptionRules, descriptionSchema, nameSchema, textSchema } from '../../lib/names';
import { formatTimestamp } from '../../lib/time';
import type { Credential } from './credentials.store';

// eslint-disable-next-line no-control-regex -- matching control characters is the point of this pattern
const NO_CONTROL = /^[^\u0000-\u001f\u007f]*$/;

const name = nameSchema('name', 128).openapi({ description: `Unique name, 1-128 characters. ${NAME_RULES}`, example: 'core-switches' });
const username = textSchema(0, 128)
  .regex(NO_CONTROL, 'must not contain control characters')
  .openapi({ description: 'Login name on the device. May be empty for devices that only ask for a password.', example: 'backup' });
const description = descriptionSchema('description', 2000).openapi({
  description: `Free text for operators. ${descriptionRules(2000)}`,
  example: 'Read-only backup account',
});

/** A write-only secret: a value sets it, null clears it; on update, leaving it out keeps the stored one. */
const secret = (max: number, what: string, example: string) =>
  textSchema(0, max)
    .min(1, 'must not be empty; use null to clear it')
    .nullable()
    .optional()
    .openapi({
      description: `${what} Write-only: stored encrypted (AES-256-GCM) and never returned; responses show only the matching \`has_*\` flag. null clears it; on update an omitted field keeps the stored value.`,
      writeOnly: true,
      example,
    });

const USAGE =
  'Usage scope: the device groups (subgroups included) whose devices may use this credential, so its secrets are only sent ' +
  'to devices there; ungrouped devices may use only a credential with `group_ids: null` (usable by devices anywhere). ' +
  'null may be set only by a user whose device-group scope is "all"; a list must name existing groups, each inside the ' +
  'caller’s scope (else 403 `PERMISSION_DENIED`). Changing it needs the old scope to lie inside the caller’s scope too, and ' +
  'is refused with 409 `CONFLICT` while a device using the credential would be left outside it.';
const groupIds = z
  .array(z.number().int().min(1).max(MAX_ID, 'must be at most 2^53-1'))
  .min(1, 'name at least one group, or null for devices anywhere')
  .max(1000)
  .nullable()
  .openapi({ description: USAGE, example: [3, 7] });

const secretFields = {
  password: secret(1024, 'Login password.', 'correct horse battery staple'),
  private_key: secret(
    32_768,
    'SSH private key, OpenSSH ("BEGIN OPENSSH PRIVATE KEY") or PEM text. Must parse as exactly one private key, opened by `passphrase` when it is encrypted, otherwise 422.',
    '-----BEGIN OPENSSH PRIVATE KEY-----\n...\n-----END OPENSSH PRIVATE KEY-----\n',
  ),
  passphrase: secret(
    1024,
    'Passphrase of an encrypted private_key; only allowed with a private key. Clearing the private key without naming the passphrase clears it too.',
    'key passphrase',
  ),
  enable_secret: secret(1024, 'Secret for privileged mode (e.g. Cisco "enable"), used by templates that define an enable step.', 'enable-secret'),
};

export const CredentialCreateSchema = z
  .object({
    name,
    username: username.default(''),
    description: description.default(''),
    group_ids: groupIds.optional().openapi({
      description: `${USAGE} Omitted: null for a caller with scope "all", otherwise the groups assigned to the caller’s user (not a copy of their subgroups: a subgroup added later is covered by inheritance, one moved out of them is not).`,
    }),
    ...secretFields,
  })
  .strict()
  .openapi('CredentialCreate', { description: 'A new credential. Unknown fields are refused (422).' });

export const CredentialUpdateSchema = z
  .object({ name: name.optional(), username: username.optional(), description: description.optional(), group_ids: groupIds.optional(), ...secretFields })
  .strict()
  .openapi('CredentialUpdate', {
    description: 'Fields to change; omitted fields keep their value. A secret set to null is cleared. Unknown fields are refused (422).',
  });

const timestamp = (what: string) =>
  z.string().openapi({ description: `${what}, "YYYY-MM-DD HH:MM:SS" in the request time zone`, example: '2025-03-01 14:05:09' });

export const CredentialSchema = z
  .object({
    id: z.number().int().openapi({ example: 3 }),
    name: z.string().openapi({ example: 'core-switches' }),
    username: z.string().openapi({ example: 'backup' }),
    description: z.string().openapi({ example: 'Read-only backup account' }),
    has_password: z.boolean().openapi({ description: 'A password is stored' }),
    has_private_key: z.boolean().openapi({ description: 'A private key is stored' }),
    has_passphrase: z.boolean().openapi({ description: 'A private-key passphrase is stored' }),
    has_enable_secret: z.boolean().openapi({ description: 'An enable secret is stored' }),
    device_count: z.number().int().openapi({ description: 'Devices that use this credential', example: 12 }),
    group_ids: z
      .array(z.number().int())
      .nullable()
      .openapi({ description: USAGE, example: [3, 7] }),
    created_at: timestamp('Creation time'),
    updated_at: timestamp('Last change'),
  })
  .openapi('Credential', { description: 'A login for devices. Secrets are never returned, only whether each one is set.' });

export const CredentialPageSchema = pagedSchema(CredentialSchema, 'CredentialPage');

export const CredentialListQuery = z.object({
  ...paginationQuery(50, 100),
  q: textSchema(0, 128)
    .optional()
    .openapi({ param: { name: 'q', in: 'query' }, description: 'Only credentials whose name contains this text (ASCII case-insensitive)', example: 'core' }),
});

export type CredentialDto = z.infer<typeof CredentialSchema>;

export function toCredentialDto(c: Credential, tz: string): CredentialDto {
  return {
    id: c.id,
    name: c.name,
    username: c.username,
    description: c.description,
    has_password: c.has_password,
    has_private_key: c.has_private_key,
    has_passphrase: c.has_passphrase,
    has_enable_secret: c.has_enable_secret,
    device_count: c.device_count,
    group_ids: c.group_ids,
    created_at: formatTimestamp(c.created_at, tz),
    updated_at: formatTimestamp(c.updated_at, tz),
  };
}
