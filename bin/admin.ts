import { loadConfig } from '../lib/config';
import { createDb, type Db } from '../lib/db';
import { createApiKey, createWorkspace, PLANS, type Access, type Plan } from '../lib/keys';

const USAGE = `usage: admin <command>
  bootstrap                                   first run: a "default" workspace and a full key (no-op later)
  workspace create <name> [--plan free|starter|pro|business]
  workspace list
  key create <workspace_id> [--access read|full] [--name NAME]
  key list <workspace_id>
  key revoke <key_id>`;

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}

async function run(db: Db, args: string[]): Promise<void> {
  const [group, cmd, arg] = args;
  if (group === 'bootstrap') {
    const existing = await db('workspaces').orderBy('created_at').first();
    if (existing) {
      console.log(`workspace exists: ${existing.id} (keys are shown only when created; make another with: npm run admin -- key create ${existing.id})`);
      return;
    }
    const ws = await createWorkspace(db, 'default', 'free');
    const key = await createApiKey(db, ws.id, 'full', 'bootstrap');
    console.log(`created workspace ${ws.id}\nfull-access API key (shown once): ${key.secret}`);
  } else if (group === 'workspace' && cmd === 'create' && arg) {
    const plan = (flag(args, 'plan') ?? 'free') as Plan;
    if (!PLANS.includes(plan)) throw new Error(`plan must be one of ${PLANS.join(', ')}`);
    const ws = await createWorkspace(db, arg, plan);
    console.log(JSON.stringify(ws));
  } else if (group === 'workspace' && cmd === 'list') {
    for (const w of await db('workspaces').orderBy('created_at')) console.log(`${w.id}\t${w.plan}\t${w.name}`);
  } else if (group === 'key' && cmd === 'create' && arg) {
    const access = (flag(args, 'access') ?? 'full') as Access;
    if (access !== 'read' && access !== 'full') throw new Error('access must be read or full');
    if (!(await db('workspaces').where({ id: arg }).first())) throw new Error(`no workspace ${arg}`);
    const key = await createApiKey(db, arg, access, flag(args, 'name') ?? '');
    console.log(`${key.id}\t${key.access}\nsecret (shown once): ${key.secret}`);
  } else if (group === 'key' && cmd === 'list' && arg) {
    for (const k of await db('api_keys').where({ workspace_id: arg }).orderBy('created_at')) {
      console.log(`${k.id}\t${k.access}\t${k.key_prefix}…\t${k.revoked_at ? 'revoked' : 'active'}\t${k.name}`);
    }
  } else if (group === 'key' && cmd === 'revoke' && arg) {
    const n = await db('api_keys').where({ id: arg }).whereNull('revoked_at').update({ revoked_at: db.fn.now() });
    console.log(n ? `revoked ${arg}` : `no active key ${arg}`);
  } else {
    console.log(USAGE);
    process.exitCode = 2;
  }
}

async function main(): Promise<void> {
  const db = createDb(loadConfig().databaseUrl, 2);
  try {
    await run(db, process.argv.slice(2));
  } finally {
    await db.destroy();
  }
}

main().catch((err) => {
  console.error(err.message ?? err);
  process.exitCode = 1;
});
