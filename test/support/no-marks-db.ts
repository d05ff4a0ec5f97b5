// A database for activities run in MockActivityEnvironment without Postgres: the one query the
// media activities make is the video's watermark (SPEC §24, lib/watermarks/store.ts
// markOfVideo), and this answers it with none.
import type { Knex } from 'knex';

const chain = { join: () => chain, where: () => chain, first: async () => undefined };

export const noMarksDb = (() => chain) as unknown as Knex;
