import type { Knex } from 'knex';

/** A piece of SQL with its positional (`?`) bindings; fragments nest. */
export interface Fragment {
  sql: string;
  bindings: Knex.RawBinding[];
}

const isFragment = (v: unknown): v is Fragment => typeof v === 'object' && v !== null && 'sql' in v && 'bindings' in v;

/** `sql\`… ${value} …\``: values become `?` bindings, fragments are spliced in. */
export function sql(strings: TemplateStringsArray, ...values: unknown[]): Fragment {
  let text = strings[0];
  const bindings: Knex.RawBinding[] = [];
  values.forEach((v, i) => {
    if (isFragment(v)) {
      text += v.sql;
      bindings.push(...v.bindings);
    } else {
      text += '?';
      bindings.push(v as Knex.RawBinding);
    }
    text += strings[i + 1];
  });
  return { sql: text, bindings };
}

export const raw = (text: string): Fragment => ({ sql: text, bindings: [] });
