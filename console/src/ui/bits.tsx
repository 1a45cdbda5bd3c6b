import { cloneElement, type ReactElement, type ReactNode, useEffect, useId, useState } from 'react';
import { Link } from 'wouter';

export function Badge({ value, kind = 'plain' }: { value: string | null | undefined; kind?: 'severity' | 'status' | 'plain' }) {
  if (!value) return <span className="muted">—</span>;
  return <span className={`badge ${kind}-${value.replace(/[^a-z_+]/gi, '')}`}>{value.replace(/_/g, ' ')}</span>;
}

export function When({ at }: { at: string | null | undefined }) {
  if (!at) return <span className="muted">never</span>;
  const date = new Date(at);
  return (
    <time dateTime={at} title={date.toISOString()}>
      {date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })}
    </time>
  );
}

/** Copies a value; says so for screen readers too. Falls back to selecting it where the clipboard is closed. */
export function CopyButton({ value, label }: { value: string; label: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      className="small"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(value);
          setDone(true);
          setTimeout(() => setDone(false), 2000);
        } catch {
          window.prompt('Copy it from here:', value);
        }
      }}
    >
      {done ? 'Copied' : `Copy ${label}`}
      <span className="sr-only" aria-live="polite">
        {done ? `${label} copied` : ''}
      </span>
    </button>
  );
}

/** A value to copy: shown whole, with its button. */
export function Secret({ value, label }: { value: string; label: string }) {
  return (
    <div className="copyable">
      <code>{value}</code> <CopyButton value={value} label={label} />
    </div>
  );
}

export function PageTitle({ title, children }: { title: string; children?: ReactNode }) {
  useEffect(() => {
    document.title = `${title} · threatmon`;
  }, [title]);
  return (
    <header className="page-title">
      <h1>{title}</h1>
      <div className="actions">{children}</div>
    </header>
  );
}

/**
 * A labelled control: the label names it by `for` (a label wrapped around a select would take the
 * chosen option into the control's name), and its hint describes it.
 */
export function Field({ label, children, hint, error }: { label: string; children: ReactElement<{ id?: string; 'aria-describedby'?: string; 'aria-invalid'?: boolean }>; hint?: string; error?: string }) {
  const id = useId();
  const described = [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(' ');
  return (
    <div className={error ? 'field invalid' : 'field'}>
      <label htmlFor={id}>{label}</label>
      {cloneElement(children, { id, 'aria-describedby': described || children.props['aria-describedby'], 'aria-invalid': error ? true : undefined })}
      {hint && (
        <small className="muted" id={`${id}-hint`}>
          {hint}
        </small>
      )}
      {error && (
        <small className="field-error" id={`${id}-error`}>
          {error}
        </small>
      )}
    </div>
  );
}

export function Card({ title, children, link }: { title: string; children: ReactNode; link?: { to: string; text: string } }) {
  return (
    <section className="card" aria-label={title}>
      <h2>{title}</h2>
      {children}
      {link && (
        <p>
          <Link href={link.to}>{link.text}</Link>
        </p>
      )}
    </section>
  );
}

/** Saves a Blob as a file the browser downloads. */
export function download(name: string, body: BlobPart, type: string) {
  const url = URL.createObjectURL(new Blob([body], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/**
 * Rows as RFC 4180 CSV (every value quoted, quotes doubled). Leak data is written by strangers: a
 * value a spreadsheet would run as a formula (= + - @ first) is opened with a quote mark (OWASP).
 */
export function toCsv(header: string[], rows: Array<Array<string | number | boolean | null | undefined>>): string {
  const cell = (v: string | number | boolean | null | undefined) => {
    const text = typeof v === 'string' && /^[=+\-@\t\r]/.test(v) ? `'${v}` : String(v ?? '');
    return `"${text.replace(/"/g, '""')}"`;
  };
  return [header, ...rows].map((r) => r.map(cell).join(',')).join('\r\n') + '\r\n';
}

/** An option of a Choice: its value (shown with spaces for underscores), or [value, text]. */
export type Option = string | readonly [value: string, text: string];

/** A labelled select: `any` adds a first, empty option (a filter's "no filter"). */
export function Choice({ label, value, onChange, options, any, error, hint, disabled, required }: { label: string; value: string; onChange: (value: string) => void; options: readonly Option[]; any?: string; error?: string; hint?: string; disabled?: boolean; required?: boolean }) {
  return (
    <Field label={label} error={error} hint={hint}>
      <select value={value} onChange={(e) => onChange(e.target.value)} disabled={disabled} required={required}>
        {any !== undefined && <option value="">{any}</option>}
        {options.map((o) => {
          const [v, text] = typeof o === 'string' ? [o, o.replace(/_/g, ' ')] : o;
          return (
            <option key={v} value={v}>
              {text}
            </option>
          );
        })}
      </select>
    </Field>
  );
}
