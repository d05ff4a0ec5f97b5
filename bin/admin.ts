import { type Config, loadConfig } from '../lib/config';
import { rewrapContentKeys } from '../lib/protection/keys';
import { createDb, type Db } from '../lib/db';
import { addMembership, upsertPerson, type Role } from '../lib/accounts/people';
import { randomToken } from '../lib/ids';
import { createApiKey, createWorkspace, PLANS, type Access, type Plan } from '../lib/keys';

const USAGE = `usage: admin <command>
  bootstrap                                   first run: a "default" workspace, a full key and the
                                              dashboard account admin@localhost (no-op later)
  account create <email> [--workspace WS_ID] [--role owner|member] [--password PW]
                                              a dashboard account (password generated and printed when
                                              not given) in WS_ID, or in a new workspace of its own
                                              on an existing email: a new password (a reset), and no
                                              new workspace
  account add <email> <workspace_id> [--role owner|member]
  account remove <email> <workspace_id>       ends the membership and revokes the keys they made there
  account list
  workspace create <name> [--plan free|starter|pro|business]
  workspace list
  key create <workspace_id> [--access read|full] [--name NAME]
  key list <workspace_id>
  key revoke <key_id>
  playback-keys rewrap                        master key rotation: re-wrap every video's AES-128 key
                                              with PLAYBACK_KEY_MASTER_KID (docs/protection.md)`;

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}

function role(args: string[]): Role {
  const r = flag(args, 'role') ?? 'owner';
  if (r !== 'owner' && r !== 'member') throw new Error('role must be owner or member');
  return r;
}

/** The first account, so a fresh install can sign in to the dashboard; its password is printed once. */
async function bootstrapAccount(db: Db, workspaceId: string): Promise<void> {
  if (await db('people').first('id')) return;
  const password = randomToken(12);
  const person = await upsertPerson(db, 'admin@localhost', password);
  await addMembership(db, person.id, workspaceId, 'owner');
  console.log(`dashboard account: admin@localhost\npassword (shown once): ${password}`);
}

async function run(db: Db, args: string[], config: Config): Promise<void> {
  const [group, cmd, arg] = args;
  if (group === 'bootstrap') {
    const existing = await db('workspaces').orderBy('created_at').first();
    if (existing) {
      console.log(`workspace exists: ${existing.id} (keys are shown only when created; make another with: npm run admin -- key create ${existing.id})`);
      await bootstrapAccount(db, existing.id);
      return;
    }
    const ws = await createWorkspace(db, 'default', 'free');
    const key = await createApiKey(db, ws.id, 'full', 'bootstrap');
    console.log(`created workspace ${ws.id}\nfull-access API key (shown once): ${key.secret}`);
    await bootstrapAccount(db, ws.id);
  } else if (group === 'account' && cmd === 'create' && arg) {
    const given = flag(args, 'password');
    const password = given ?? randomToken(12);
    let wsId = flag(args, 'workspace');
    if (wsId && !(await db('workspaces').where({ id: wsId }).first())) throw new Error(`no workspace ${wsId}`);
    const person = await upsertPerson(db, arg, password);
    if (wsId) {
      await addMembership(db, person.id, wsId, role(args));
    } else if (person.created) {
      // A workspace made for the person is theirs: owner, whatever --role says.
      wsId = (await createWorkspace(db, person.email, 'free')).id;
      await addMembership(db, person.id, wsId, 'owner');
    }
    // A reset (existing email, no --workspace) changes the password only.
    console.log(`${person.created ? 'created' : 'updated'} ${person.id}\t${person.email}${wsId ? `\tin ${wsId}` : ''}`);
    if (!given) console.log(`password (shown once): ${password}`);
  } else if (group === 'account' && cmd === 'add' && arg && args[3]) {
    const person = await db('people').whereRaw('lower(email) = ?', [arg.trim().toLowerCase()]).first('id');
    if (!person) throw new Error(`no account ${arg}`);
    if (!(await db('workspaces').where({ id: args[3] }).first())) throw new Error(`no workspace ${args[3]}`);
    await addMembership(db, person.id, args[3], role(args));
    console.log(`added ${arg} to ${args[3]}`);
  } else if (group === 'account' && cmd === 'remove' && arg && args[3]) {
    const person = await db('people').whereRaw('lower(email) = ?', [arg.trim().toLowerCase()]).first('id');
    if (!person) throw new Error(`no account ${arg}`);
    // The memberships trigger (migration 20261125110000) revokes the keys they made there.
    const n = await db('memberships').where({ person_id: person.id, workspace_id: args[3] }).delete();
    await db('sessions').where({ person_id: person.id, workspace_id: args[3] }).update({ workspace_id: null });
    console.log(n ? `removed ${arg} from ${args[3]}` : `${arg} is not a member of ${args[3]}`);
  } else if (group === 'account' && cmd === 'list') {
    const rows = await db('people as p').leftJoin('memberships as m', 'm.person_id', 'p.id').orderBy('p.created_at').select('p.id', 'p.email', 'm.workspace_id', 'm.role');
    for (const r of rows) console.log(`${r.id}\t${r.email}\t${r.workspace_id ?? '-'}\t${r.role ?? ''}`);
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
  } else if (group === 'playback-keys' && cmd === 'rewrap') {
    const n = await rewrapContentKeys(db, config.protection);
    console.log(`re-wrapped ${n} video key(s) with master ${config.protection.currentKid}`);
  } else {
    console.log(USAGE);
    process.exitCode = 2;
  }
}

async function main(): Promise<void> {
  const config = loadConfig();
  const db = createDb(config.databaseUrl, 2);
  try {
    await run(db, process.argv.slice(2), config);
  } finally {
    await db.destroy();
  }
}

main().catch((err) => {
  console.error(err.message ?? err);
  process.exitCode = 1;
});
