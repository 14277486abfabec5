// Who may do what with templates: each operation's permissions and ownership rule, read by every door.
import { operation } from '../../identity/policy';

const shared = { scope: 'none', ownership: 'shared-thing' } as const;

export const TEMPLATE_OPS = {
  list: operation('templates.list', ['templates.view'], { scope: 'none' }, { api: 'GET /templates', web: ['GET /templates'], cli: 'template list' }),
  get: operation(
    'templates.get',
    ['templates.view'],
    { scope: 'none' },
    { api: 'GET /templates/{template_id}', web: ['GET /templates/:id', 'GET /templates/:id/export.yaml'], cli: 'template show' },
  ),
  create: operation(
    'templates.create',
    ['templates.create'],
    { scope: 'none' },
    { api: 'POST /templates', web: ['GET /templates/new', 'POST /templates', 'POST /templates/:id/clone'], cli: 'template import' },
  ),
  update: operation('templates.update', ['templates.update'], shared, { api: 'PUT /templates/{template_id}', web: ['POST /templates/:id/edit'] }),
  delete: operation('templates.delete', ['templates.delete'], shared, { api: 'DELETE /templates/{template_id}', web: ['POST /templates/:id/delete'] }),
  /**
   * "Try on device": runs a draft against a real device (backups.run) and shows what it captured (backups.view), as
   * someone who may change templates (templates.update); the device must lie in the actor's scope.
   */
  try: operation(
    'templates.try',
    ['templates.update', 'backups.run', 'backups.view'],
    { scope: 'groups', ownership: 'shared-thing' },
    { web: ['POST /templates/new/try', 'POST /templates/:id/try'], cli: 'template try' },
  ),
} as const;
