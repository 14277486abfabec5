// Who may see and change notification channels and rules (settings.*), read by every door.
import { operation } from '../../identity/policy';

const shared = { scope: 'groups', ownership: 'shared-thing' } as const;
const BASE = '/settings/notifications';

export const NOTIFICATION_OPS = {
  view: operation(
    'notifications.view',
    ['settings.view'],
    { scope: 'groups' },
    {
      api: ['GET /notifications/channels', 'GET /notifications/channels/{name}', 'GET /notifications/rules', 'GET /notifications/rules/{name}'],
      web: [`GET ${BASE}`],
      cli: 'notify channel list',
    },
  ),
  /**
   * A channel decides where the appliance connects: adding one needs scope "all" (notifications.service). Adding a
   * channel or a rule is done on the page that lists them (and shows a refused form again), hence settings.view too.
   */
  addChannel: operation(
    'notifications.add_channel',
    ['settings.view', 'settings.update'],
    { scope: 'all' },
    { api: 'POST /notifications/channels', web: [`POST ${BASE}/channels`], cli: 'notify channel add' },
  ),
  /** Renaming or retargeting a channel decides where the appliance connects, as adding one: scope "all". */
  updateChannel: operation(
    'notifications.update_channel',
    ['settings.view', 'settings.update'],
    { scope: 'all' },
    { api: 'PUT /notifications/channels/{name}' },
  ),
  removeChannel: operation('notifications.remove_channel', ['settings.update'], shared, {
    api: 'DELETE /notifications/channels/{name}',
    web: [`POST ${BASE}/channels/:name/remove`],
    cli: 'notify channel remove',
  }),
  testChannel: operation('notifications.test_channel', ['settings.update'], shared, { web: [`POST ${BASE}/channels/:name/test`], cli: 'notify channel test' }),
  addRule: operation(
    'notifications.add_rule',
    ['settings.view', 'settings.update'],
    { scope: 'groups' },
    { api: 'POST /notifications/rules', web: [`POST ${BASE}/rules`], cli: 'notify rule add' },
  ),
  /** Changing a rule: as adding one (the new rule in the actor's scope) and as removing it (the old one too). */
  updateRule: operation('notifications.update_rule', ['settings.view', 'settings.update'], shared, { api: 'PUT /notifications/rules/{name}' }),
  removeRule: operation('notifications.remove_rule', ['settings.update'], shared, {
    api: 'DELETE /notifications/rules/{name}',
    web: [`POST ${BASE}/rules/:name/remove`],
    cli: 'notify rule remove',
  }),
} as const;
