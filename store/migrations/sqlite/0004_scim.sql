-- SCIM provisioning (SPEC.md §4 "Provisioning (SCIM)"; COMPAT.md decision 7).
--
-- Users already carry `scim` ({provider: {external_id}}) and `active` (0001).
-- Groups get the same `scim` map, so an identity provider's group id is
-- stored per provider and returned, as it is for users. No index: lookups by
-- externalId go through json_extract with the provider named at run time,
-- and a deployment has thousands of accounts at most, which SQLite scans in
-- well under a millisecond.
ALTER TABLE groups ADD COLUMN scim TEXT; -- JSON {provider: {external_id}} or NULL
