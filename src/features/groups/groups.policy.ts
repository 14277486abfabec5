// Who may do what with device groups: each operation's permissions and scope rule, read by every door.
import { operation } from '../../identity/policy';

const groups = { scope: 'groups' } as const;

export const GROUP_OPS = {
  list: operation('groups.list', ['groups.view'], groups, { api: 'GET /groups', web: ['GET /groups'] }),
  tree: operation('groups.tree', ['groups.view'], groups, { api: 'GET /groups/tree' }),
  get: operation('groups.get', ['groups.view'], groups, { api: 'GET /groups/{group_id}' }),
  /** A top-level group needs scope "all" (groups.service). */
  create: operation('groups.create', ['groups.create'], groups, { api: 'POST /groups', web: ['POST /groups'] }),
  update: operation('groups.update', ['groups.update'], groups, { api: 'PUT /groups/{group_id}', web: ['POST /groups/:id/edit'] }),
  delete: operation('groups.delete', ['groups.delete'], groups, { api: 'DELETE /groups/{group_id}', web: ['POST /groups/:id/delete'] }),
} as const;
