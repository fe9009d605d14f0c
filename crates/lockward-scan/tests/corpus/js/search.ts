// Search reindex. pg_advisory_lock(2000006) in a comment is not a site.
export const advisoryLockSearch: bigint = 2_000_006n; // site(2000006)
const blockKeySize = 2_000_006;
const pattern = /'pg_advisory_lock\(1\)'/;

export async function reindex(client: Client, shard: number): Promise<void> {
  await client.query(`SELECT pg_try_advisory_lock(${advisoryLockSearch})`); // site(2000006)
  await client.query('SELECT pg_advisory_unlock($1)', [advisoryLockSearch]); // site(2000006)
  await client.query("SELECT pg_advisory_lock(2000006, 1)"); // expect(key-shape-mismatch) site(2000006)
  const worker = { advisoryLockId: 2_000_006 }; // site(2000006)
  const other = { advisory_lock_id: 2_000_099 }; // expect(unregistered-id) site(2000099)
}
export const SEARCH_SHARD_LOCK_KEY = 2_000_098 as const; // expect(unregistered-id) site(2000098)
