import type { Migration } from 'kysely';
import * as init from './2026-11-21T00-00_init.js';
import * as filters from './2026-11-21T01-00_filters.js';
import * as ciValues from './2026-11-22T00-00_ci-values-plpgsql.js';
import * as lowerValues from './2026-11-23T00-00_lower-values.js';
import * as orgCounts from './2026-11-23T01-00_org-counts.js';
import * as userNameStatistics from './2026-11-23T02-00_user-name-statistics.js';
import * as groupMemberChanges from './2026-11-23T03-00_group-member-changes.js';
import * as mergePatch from './2026-11-24T00-00_merge-patch.js';
import * as changeFeed from './2026-11-26T00-00_change-feed.js';
import * as webhooks from './2026-11-27T00-00_webhooks.js';
import * as numberChangesUnlocked from './2026-11-28T00-00_number-changes-unlocked.js';
import * as orgSchemas from './2026-11-29T00-00_org-schemas.js';
import * as changesDerivedWhenNumbered from './2026-11-30T00-00_changes-derived-when-numbered.js';
import * as syncActivity from './2026-12-01T00-00_sync-activity.js';
import * as console from './2026-12-02T00-00_console.js';
import * as usersHotUpdates from './2026-12-03T00-00_users-hot-updates.js';
import * as deprovisionedUsersLeaveGroups from './2026-12-04T00-00_deprovisioned-users-leave-groups.js';
import * as failureReasons from './2026-12-05T00-00_failure-reasons.js';
import * as roles from './2026-12-06T00-00_roles.js';
import * as effectiveRoles from './2026-12-06T01-00_effective-roles.js';
import * as accessByChange from './2026-12-07T00-00_access-by-change.js';
import * as accessWithoutCatalogue from './2026-12-08T00-00_access-without-catalogue.js';
import * as rolesGrantPlannedOnce from './2026-12-09T00-00_roles-grant-planned-once.js';
import * as usersOrderCoversDeprovisioning from './2026-12-10T00-00_users-order-covers-deprovisioning.js';
import * as revokeOnlyHeld from './2026-12-10T01-00_revoke-only-held.js';
import * as memberAccessProbeFirst from './2026-12-10T02-00_member-access-probe-first.js';

// Every migration, by name; Kysely runs them in name order. Add new files here, then run `npm run schema`:
// schema.sql beside them shows what the migrations build (the latest text of every table and function).
export const migrations: Record<string, Migration> = {
  '2026-11-21T00-00_init': init,
  '2026-11-21T01-00_filters': filters,
  '2026-11-22T00-00_ci-values-plpgsql': ciValues,
  '2026-11-23T00-00_lower-values': lowerValues,
  '2026-11-23T01-00_org-counts': orgCounts,
  '2026-11-23T02-00_user-name-statistics': userNameStatistics,
  '2026-11-23T03-00_group-member-changes': groupMemberChanges,
  '2026-11-24T00-00_merge-patch': mergePatch,
  '2026-11-26T00-00_change-feed': changeFeed,
  '2026-11-27T00-00_webhooks': webhooks,
  '2026-11-28T00-00_number-changes-unlocked': numberChangesUnlocked,
  '2026-11-29T00-00_org-schemas': orgSchemas,
  '2026-11-30T00-00_changes-derived-when-numbered': changesDerivedWhenNumbered,
  '2026-12-01T00-00_sync-activity': syncActivity,
  '2026-12-02T00-00_console': console,
  '2026-12-03T00-00_users-hot-updates': usersHotUpdates,
  '2026-12-04T00-00_deprovisioned-users-leave-groups': deprovisionedUsersLeaveGroups,
  '2026-12-05T00-00_failure-reasons': failureReasons,
  '2026-12-06T00-00_roles': roles,
  '2026-12-06T01-00_effective-roles': effectiveRoles,
  '2026-12-07T00-00_access-by-change': accessByChange,
  '2026-12-08T00-00_access-without-catalogue': accessWithoutCatalogue,
  '2026-12-09T00-00_roles-grant-planned-once': rolesGrantPlannedOnce,
  '2026-12-10T00-00_users-order-covers-deprovisioning': usersOrderCoversDeprovisioning,
  '2026-12-10T01-00_revoke-only-held': revokeOnlyHeld,
  '2026-12-10T02-00_member-access-probe-first': memberAccessProbeFirst,
};
