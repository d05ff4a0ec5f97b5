import type { Db } from '../db';

export interface ThrottleLimits {
  /** Failures for one email from one address (the guesses an address gets at an account). */
  maxFailuresPerAccount: number;
  /** Failures from one address, whatever the emails (password spraying). */
  maxFailuresPerIp: number;
  /** Failures for one email from every address together (a ceiling for distributed guessing). */
  maxFailuresPerEmail: number;
  failureWindowSeconds: number;
}

export type Attempt = { allowed: true; id: string } | { allowed: false; retryAfter: number };

/**
 * Starts a sign-in attempt: decides, and if allowed records it as a failure in advance, under
 * per-email and per-address locks, so concurrent attempts count each other and no more than the
 * limits' worth of passwords is ever checked (issue 22: 20 parallel guesses used to all get
 * through the count before any was recorded). A success takes its record back (`attemptSucceeded`).
 * Refused attempts are not recorded, so a throttled client does not extend its own wait.
 */
export async function beginAttempt(db: Db, email: string, ip: string, limits: ThrottleLimits): Promise<Attempt> {
  return db.transaction(async (tx) => {
    // Always email first, then address: no two transactions wait on each other in a cycle.
    await tx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`vidhost:login:email:${email}`]);
    await tx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`vidhost:login:ip:${ip}`]);
    const window = `now() - make_interval(secs => ${Number(limits.failureWindowSeconds)})`;
    // For each scope: whether it is at its limit, and then when its oldest counted failure leaves the window.
    const scope = (where: string, limit: number) => `
      (select case when count(*) >= ${Number(limit)}
         then ceil(extract(epoch from (min(at) + make_interval(secs => ${Number(limits.failureWindowSeconds)}) - now())))
         else 0 end
       from (select at from login_failures where ${where} and at > ${window} order by at desc limit ${Number(limit)}) s)`;
    const { rows } = await tx.raw(
      `select greatest(${scope('email = :email and ip = :ip', limits.maxFailuresPerAccount)},
                       ${scope('ip = :ip', limits.maxFailuresPerIp)},
                       ${scope('email = :email', limits.maxFailuresPerEmail)}) as wait`,
      { email, ip },
    );
    const wait = Number(rows[0].wait);
    if (wait > 0) return { allowed: false, retryAfter: Math.max(1, wait) } as const;
    const [row] = await tx('login_failures').insert({ email, ip }).returning('id');
    if (Math.random() < 0.05) void db('login_failures').where('at', '<', new Date(Date.now() - 86_400_000)).delete().catch(() => undefined);
    return { allowed: true, id: String(row.id) } as const;
  });
}

/**
 * The password was right: the attempt was not a failure, and this address's earlier failures at
 * this account are forgotten. Failures from other addresses stay (they were someone else's).
 */
export async function attemptSucceeded(db: Db, attemptId: string, email: string, ip: string): Promise<void> {
  await db('login_failures').where({ id: attemptId }).orWhere({ email, ip }).delete();
}
