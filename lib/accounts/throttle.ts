import type { Db } from '../db';

export interface ThrottleLimits {
  maxFailuresPerAccount: number;
  maxFailuresPerIp: number;
  failureWindowSeconds: number;
}

/**
 * Seconds to wait before another sign-in attempt for this email or from this IP, or 0. Counted from
 * failures in a sliding window, so a correct password is refused too while throttled (otherwise
 * the throttle would only slow down the guessing, not stop it).
 */
export async function throttledFor(db: Db, email: string, ip: string, limits: ThrottleLimits): Promise<number> {
  const since = new Date(Date.now() - limits.failureWindowSeconds * 1000);
  const { rows } = await db.raw(
    `select
       (select count(*) from login_failures where email = ? and at > ?) as by_email,
       (select min(at) from (select at from login_failures where email = ? and at > ? order by at desc limit ?) e) as email_oldest,
       (select count(*) from login_failures where ip = ? and at > ?) as by_ip,
       (select min(at) from (select at from login_failures where ip = ? and at > ? order by at desc limit ?) i) as ip_oldest`,
    [email, since, email, since, limits.maxFailuresPerAccount, ip, since, ip, since, limits.maxFailuresPerIp],
  );
  const r = rows[0];
  const waits: number[] = [0];
  const until = (oldest: Date) => Math.ceil((new Date(oldest).getTime() + limits.failureWindowSeconds * 1000 - Date.now()) / 1000);
  if (Number(r.by_email) >= limits.maxFailuresPerAccount) waits.push(until(r.email_oldest));
  if (Number(r.by_ip) >= limits.maxFailuresPerIp) waits.push(until(r.ip_oldest));
  return Math.max(...waits);
}

export async function recordFailure(db: Db, email: string, ip: string): Promise<void> {
  await db('login_failures').insert({ email, ip });
  if (Math.random() < 0.05) void db('login_failures').where('at', '<', new Date(Date.now() - 86_400_000)).delete().catch(() => undefined);
}

/** A successful sign-in forgets the account's failures (not the IP's). */
export async function clearFailures(db: Db, email: string): Promise<void> {
  await db('login_failures').where({ email }).delete();
}
