// The batched writes of users and groups of one process (db/write-batches.ts): created once with the
// app (app.ts) and given to every SCIM request, so that concurrent writes of an organization share
// statements. Nothing of it lives in a module.

import { GroupWrites } from './groups.repository.js';
import { MemberWrites } from './member-writes.repository.js';
import { UserWrites } from './user-writes.repository.js';

export class ResourceWrites {
  readonly users = new UserWrites();
  readonly groups = new GroupWrites();
  readonly members = new MemberWrites();
}
