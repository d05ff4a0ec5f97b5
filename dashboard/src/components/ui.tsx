import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { Video } from '../api';
import { BASE, onLink } from '../router';

export function Link({ to, children, class: cls, current }: { to: string; children: ComponentChildren; class?: string; current?: boolean }) {
  return (
    <a href={`${BASE}${to}`} onClick={onLink} class={cls} aria-current={current ? 'page' : undefined}>
      {children}
    </a>
  );
}

const STATUS_LABEL: Record<Video['status'], string> = { pending_upload: 'Waiting for upload', processing: 'Processing', ready: 'Ready', failed: 'Failed' };

export function StatusBadge({ video }: { video: Pick<Video, 'status' | 'progress'> }) {
  return (
    <span class={`badge badge-${video.status}`} data-status={video.status}>
      {STATUS_LABEL[video.status] ?? video.status}
      {video.status === 'processing' ? ` ${video.progress}%` : ''}
    </span>
  );
}

export function Progress({ value, label }: { value: number; label: string }) {
  return (
    <div class="progress">
      <progress max={100} value={value} aria-label={label} />
      <span aria-hidden="true">{Math.round(value)}%</span>
    </div>
  );
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // Without clipboard permission (plain http on another host): select the text for Ctrl-C.
      const ta = document.createElement('textarea');
      ta.value = text;
      document.body.append(ta);
      ta.select();
      document.execCommand('copy');
      ta.remove();
    }
    setDone(true);
    setTimeout(() => setDone(false), 1500);
  };
  return (
    <button type="button" class="secondary" onClick={copy}>
      {done ? 'Copied' : label}
    </button>
  );
}

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {error instanceof Error ? error.message : String(error)}
    </p>
  );
}

export function Secret({ title, value }: { title: string; value: string }) {
  return (
    <div class="secret" role="status">
      <p>
        <strong>{title}</strong> It is shown only this once: copy it now.
      </p>
      <code data-testid="secret">{value}</code> <CopyButton text={value} />
    </div>
  );
}

/** A table's header row; an empty name is the actions column (named for screen readers only). */
export function TableHead({ cols }: { cols: string[] }) {
  return (
    <thead>
      <tr>
        {cols.map((c) =>
          c ? (
            <th scope="col" key={c}>
              {c}
            </th>
          ) : (
            <th scope="col" key="">
              <span class="visually-hidden">Actions</span>
            </th>
          ),
        )}
      </tr>
    </thead>
  );
}

/** A filter: a labelled `<select>` whose first choice, "Any", is the empty value. */
export function AnySelect({ label, name, value, options = [] }: { label: string; name: string; value: string; options?: Array<{ value: string; label: string }> }) {
  return (
    <label>
      {label}
      <select name={name} defaultValue={value}>
        <option value="">Any</option>
        {options.map((o) => (
          <option value={o.value} key={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </label>
  );
}
