import { type ComponentChildren, Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { ErrorNote, TableHead } from './ui';

// The shape the Keys, Live, Restrictions and Webhooks pages share: a create form (left out for a
// role that may not create: docs/dashboard.md, "Roles"), what the last action showed (a secret
// shown once, the workspace defaults…), the error of the last action or load, and a table of the
// collection with an actions column. Each page keeps its heading, its intro and whatever else it
// shows around this (the Live page's own panels go beside it, not into it).

/** Runs an action: clears the last failure, records a new one, reloads after success. */
export function useActions(reload: () => Promise<void>) {
  const [failure, setFailure] = useState<unknown>(null);
  const run = async (fn: () => Promise<unknown>, after: () => Promise<unknown> = reload): Promise<boolean> => {
    setFailure(null);
    try {
      await fn();
      await after();
      return true;
    } catch (err) {
      setFailure(err);
      return false;
    }
  };
  return { failure, run };
}

export interface CreateSpec {
  /** The form's accessible name, e.g. "Create an API key". */
  label: string;
  /** The submit button's text. */
  submit: string;
  /** `row` (fields side by side) or `stack` (one per line). */
  layout?: 'row' | 'stack';
  /** `[label, control]`: the control inside its `<label>`; an empty label: the control as it is (a checkbox's own label, a fieldset). */
  fields: Array<[string, ComponentChildren]>;
  /** Gets the form's values; the form is reset unless it answers false. */
  onCreate: (form: FormData) => Promise<boolean>;
}

export interface Column<T> {
  title: string;
  cell: (row: T) => ComponentChildren;
  /** Text that may wrap onto several lines (a title, a list), instead of one line. */
  wrap?: boolean;
}

export interface CollectionProps<T extends { id: string }> {
  /** Omitted: no form (the role may not create). */
  create?: CreateSpec | false;
  /** Shown between the form and the table: a secret shown once, defaults, a note. */
  children?: ComponentChildren;
  error: unknown;
  rows: T[] | undefined;
  columns: Array<Column<T>>;
  /** The data attribute of a row's `<tr>` that carries its id, e.g. `data-key-id`. */
  idAttribute: string;
  /** The actions cell; omitted (or answering null for every row): no actions column. */
  actions?: (row: T) => ComponentChildren;
  /** A row shown as one full-width cell instead (an edit form), or null. */
  replace?: (row: T) => ComponentChildren | null;
  /** Shown instead of an empty table. */
  empty?: string;
}

function CreateForm({ spec }: { spec: CreateSpec }) {
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    if (await spec.onCreate(new FormData(form))) form.reset();
  };
  return (
    <form class={spec.layout ?? 'row'} onSubmit={submit} aria-label={spec.label}>
      {spec.fields.map(([label, control], i) =>
        label ? (
          <label key={label}>
            {label}
            {control}
          </label>
        ) : (
          <Fragment key={i}>{control}</Fragment>
        ),
      )}
      <button type="submit">{spec.submit}</button>
    </form>
  );
}

export function Collection<T extends { id: string }>(p: CollectionProps<T>) {
  const titles = [...p.columns.map((c) => c.title), ...(p.actions ? [''] : [])];
  return (
    <>
      {p.create && <CreateForm spec={p.create} />}
      {p.children}
      <ErrorNote error={p.error} />
      {p.empty && p.rows?.length === 0 ? (
        <p>{p.empty}</p>
      ) : (
        // `cards`: at phone width each row is a card of labelled fields (styles.css), never wider than the screen.
        <table class="cards">
          <TableHead cols={titles} />
          <tbody>
            {p.rows?.map((r) => {
              const swapped = p.replace?.(r);
              return (
                <tr key={r.id} {...{ [p.idAttribute]: r.id }}>
                  {swapped ? (
                    <td colSpan={titles.length}>{swapped}</td>
                  ) : (
                    <>
                      {p.columns.map((c) => (
                        <td key={c.title} data-label={c.title} class={c.wrap ? 'wrap' : undefined}>
                          {c.cell(r)}
                        </td>
                      ))}
                      {p.actions && (
                        <td class="actions-cell">
                          <div class="actions">{p.actions(r)}</div>
                        </td>
                      )}
                    </>
                  )}
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </>
  );
}
