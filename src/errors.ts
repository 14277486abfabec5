// The one error type of the appliance's services and APIs, and the table mapping each code to its HTTP status.

export const ERROR_CODES = {
  // Generic (spec section 7.2)
  BAD_REQUEST: { status: 400, description: 'The request violates a rule of the API.' },
  UNAUTHORIZED: { status: 401, description: 'API key missing, invalid, expired, revoked, or its user is disabled.' },
  PERMISSION_DENIED: { status: 403, description: 'The key’s user lacks the permission, or the resource is outside its device-group scope.' },
  RESOURCE_NOT_FOUND: { status: 404, description: 'The resource does not exist.' },
  ROUTE_NOT_FOUND: { status: 404, description: 'No such endpoint.' },
  METHOD_NOT_ALLOWED: { status: 405, description: 'The endpoint does not support this method.' },
  REQUEST_TIMEOUT: { status: 408, description: 'The request (headers or body) did not arrive within the server’s time limit.' },
  CONFLICT: { status: 409, description: 'The current state of the resource does not allow the operation.' },
  PAYLOAD_TOO_LARGE: { status: 413, description: 'The request body is larger than the configured limit.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, description: 'Request bodies must be JSON (Content-Type: application/json).' },
  VALIDATION_ERROR: { status: 422, description: 'Path, query parameters or JSON body failed validation; see error.details.errors.' },
  HEADERS_TOO_LARGE: { status: 431, description: 'The request headers are larger than the server accepts.' },
  INTERNAL_ERROR: { status: 500, description: 'Internal server error. The request id identifies it in the appliance log.' },
  SERVICE_UNAVAILABLE: {
    status: 503,
    description: 'The database is busy (held by another process), too many searches or diffs are queued, or the appliance is stopping; try again shortly.',
  },
  // Backups (spec 7.3)
  BACKUP_DEVICE_NOT_FOUND: { status: 404, description: 'Backup history: the device does not exist.' },
  BACKUP_DEVICE_FORBIDDEN: { status: 403, description: 'Backup history or content: the device is outside the key’s device-group scope.' },
  BACKUP_NOT_FOUND: { status: 404, description: 'Backup content: the backup record does not exist.' },
  // Devices
  DEVICE_NAME_EXISTS: { status: 400, description: 'Another device already has this name.' },
  // Groups
  GROUP_NAME_EXISTS: { status: 400, description: 'A sibling group already has this name.' },
  GROUP_HAS_CHILDREN: { status: 409, description: 'The group still has subgroups; move or delete them first.' },
  GROUP_HAS_DEVICES: { status: 409, description: 'The group still holds devices; move or delete them first.' },
  GROUP_PARENT_INVALID: { status: 409, description: 'A group cannot be moved under itself or one of its descendants.' },
  // Credentials
  CREDENTIAL_NAME_EXISTS: { status: 400, description: 'Another credential already has this name.' },
  RESOURCE_CREDENTIAL_IN_USE: { status: 400, description: 'The credential is used by at least one device.' },
  // Templates
  TEMPLATE_NAME_EXISTS: { status: 400, description: 'Another template already has this name.' },
  TEMPLATE_BUILTIN_READONLY: { status: 409, description: 'Built-in templates cannot be changed or deleted; copy one instead.' },
  TEMPLATE_IN_USE: { status: 409, description: 'The template is used by at least one device.' },
  // Identity (CLI and web interface)
  USERNAME_EXISTS: { status: 400, description: 'Another user already has this name.' },
  ROLE_NAME_EXISTS: { status: 400, description: 'Another role already has this name.' },
  ROLE_BUILTIN_READONLY: { status: 409, description: 'A built-in role (administrator, read-only, backup-operator, auditor) cannot be changed.' },
  ROLE_IN_USE: { status: 409, description: 'The role is assigned to at least one user.' },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface FieldError {
  field: string;
  message: string;
}

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.status = ERROR_CODES[code].status;
  }

  static validation(errors: FieldError[], message = 'Request validation failed'): ApiError {
    return new ApiError('VALIDATION_ERROR', message, { errors });
  }

  static notFound(what: string): ApiError {
    return new ApiError('RESOURCE_NOT_FOUND', `${what} not found`);
  }
}

/** Map better-sqlite3 unique-constraint failures to a business error; anything else is rethrown. */
export function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: string })?.code === 'SQLITE_CONSTRAINT_UNIQUE';
}
