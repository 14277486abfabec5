// Administration pages: inventory (groups, credentials, templates) and identity (users, roles).
import type { Hono } from 'hono';
import type { WebEnv } from '../web-context';
import { registerCredentials } from './credentials';
import { registerGroups } from './groups';
import { registerRoles } from './roles';
import { registerTemplates } from './templates';
import { registerUsers } from './users';

export function registerAdminPages(web: Hono<WebEnv>): void {
  registerGroups(web);
  registerCredentials(web);
  registerTemplates(web);
  registerUsers(web);
  registerRoles(web);
}
