// The notification worker's diffs on the compute pool: one task per message, under the message's deadline.
import type { DiffOutcome, NotificationDiffRunner } from '../../notifications/notification-diffs';
import { runOffThread } from './pool';

export const runNotificationDiffs: NotificationDiffRunner = (task, hardMs) => runOffThread<DiffOutcome[]>({ kind: 'notification-diffs', ...task }, hardMs);
