// Payment runs: one host at a time, on the id core handed over to billing.
import { Client } from "pg";

export const ADVISORY_LOCK_PAYMENT_RUN = 1_001_002;

export async function paymentRun(client: Client): Promise<boolean> {
  const { rows } = await client.query("SELECT pg_try_advisory_lock($1) AS led", [
    ADVISORY_LOCK_PAYMENT_RUN,
  ]);
  if (!rows[0].led) return false;
  try {
    await client.query("CALL run_payments()");
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [ADVISORY_LOCK_PAYMENT_RUN]);
  }
  return true;
}
