import assert from 'node:assert/strict';
import { applyListQuery, encodeCursor, listQuery } from '../../api/videos/list';
import type { Db } from '../../lib/db';
import { createWorkspace } from '../../lib/keys';
import { VIDEO_WITH_RELATIONS } from '../../lib/videos/read';
import { seedVideos, type Seeded } from '../../bench/seed';
import { testDatabase } from '../support/hooks';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

function nodes(p: PlanNode): PlanNode[] {
  return [p, ...(p.Plans ?? []).flatMap(nodes)];
}

/** The plan of the exact query GET /videos runs for `params`. */
async function planOf(db: Db, workspaceId: string, params: Record<string, string>): Promise<PlanNode[]> {
  const q = applyListQuery(db('videos as v').select(db.raw(VIDEO_WITH_RELATIONS)), listQuery.parse(params), workspaceId).toSQL();
  const { rows } = await db.raw(`explain (format json) ${q.sql}`, q.bindings as never);
  return nodes(rows[0]['QUERY PLAN'][0].Plan);
}

describe('hot: GET /videos plans on a seeded workspace use indexes (no Seq Scan on videos)', function () {
  this.timeout(300_000);
  const COUNT = 30_000;
  let db: Db;
  let ws: string;
  let seeded: Seeded;
  let deep: string;
  let rare: string;

  before(async () => {
    db = (await testDatabase()).db;
    ws = (await createWorkspace(db, 'plans')).id;
    seeded = await seedVideos(db, ws, COUNT);
    const { rows } = await db.raw(
      `select id, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as t from videos
        where workspace_id = ? order by created_at desc, id desc offset ? limit 1`,
      [ws, Math.floor(COUNT * 0.8)],
    );
    deep = encodeCursor(rows[0].t, rows[0].id);
    rare = (await db.raw(`select substr(md5(12345::text), 1, 8) as w`)).rows[0].w;
  });

  const cases: Array<[string, () => Record<string, string>, RegExp]> = [
    ['first page', () => ({}), /^videos_ws_page$/],
    ['a deep page (80% in)', () => ({ cursor: deep }), /^videos_ws_page$/],
    ['a deep page, ascending', () => ({ cursor: deep, order: 'asc' }), /^videos_ws_page$/],
    ['status', () => ({ status: 'failed' }), /^videos_ws_status_page$/],
    ['status, deep', () => ({ status: 'processing', cursor: deep }), /^videos_ws_status_page$/],
    ['visibility', () => ({ visibility: 'private', cursor: deep }), /^videos_ws_(visibility_)?page$/],
    ['folder', () => ({ folder_id: seeded.folders[3] }), /^videos_ws_folder_page$/],
    ['folder, deep', () => ({ folder_id: seeded.folders[3], cursor: deep }), /^videos_ws_folder_page$/],
    ['tag', () => ({ tag: 'tag3' }), /^video_tags_tag_page$/],
    ['tag, deep', () => ({ tag: 'tag3', cursor: deep }), /^video_tags_tag_page$/],
    ['q, a rare word', () => ({ q: rare }), /^videos_title_trgm$/],
    ['q, a rare word in capitals, deep', () => ({ q: rare.toUpperCase(), cursor: deep }), /^videos_title_trgm$/],
    ['q, a common word', () => ({ q: 'keynote' }), /^(videos_ws_page|videos_title_trgm)$/],
  ];

  for (const [name, params, index] of cases) {
    it(name, async () => {
      const plan = await planOf(db, ws, params());
      const onVideos = plan.filter((n) => n['Relation Name'] === 'videos');
      assert.ok(onVideos.length > 0, JSON.stringify(plan.map((n) => n['Node Type'])));
      for (const n of onVideos) assert.notEqual(n['Node Type'], 'Seq Scan', `Seq Scan on videos: ${JSON.stringify(plan.map((x) => [x['Node Type'], x['Index Name']]))}`);
      const used = plan.map((n) => n['Index Name']).filter((x): x is string => !!x);
      assert.ok(used.some((i) => index.test(i)), `expected ${index}, plan uses ${used.join(', ')}`);
    });
  }
});
