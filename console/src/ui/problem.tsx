import { useSession } from '../session';
import { isApiError } from './load';

/**
 * An error as the person should read it: the API's own explanation, a 403 said as what the role
 * cannot do, and the fields a validation problem names. Never a blank page.
 */
export function ErrorNote({ error, action }: { error: unknown; action?: string }) {
  const { me } = useSession();
  if (!error) return null;
  if (!isApiError(error)) return <p role="alert" className="error">Something went wrong{action ? ` while trying to ${action}` : ''}: {String((error as Error)?.message ?? error)}. Try again.</p>;
  const { status, problem } = error;
  if (status === 403) {
    return (
      <div role="alert" className="error">
        <strong>Not allowed.</strong> Your role{me ? ` (${me.role})` : ''} cannot {action ?? 'do this'}: {problem.detail} Ask an administrator of your organization if you need it.
      </div>
    );
  }
  if (status === 404) return <p role="alert" className="error">Not found: it does not exist, or it belongs to another organization.</p>;
  return (
    <div role="alert" className="error">
      <strong>{problem.title || 'Error'}.</strong> {problem.detail}
      {problem.errors && problem.errors.length > 0 && (
        <ul>
          {problem.errors.map((e, i) => (
            <li key={i}>
              <code>{e.field}</code>: {e.message}
            </li>
          ))}
        </ul>
      )}
      {status === 429 && problem.retry_after !== undefined && <> Try again in {problem.retry_after} s.</>}
    </div>
  );
}

/** A page's whole-load failure or its loading state, else nothing. */
export function LoadState({ loading, error, what }: { loading: boolean; error: unknown; what: string }) {
  if (error) return <ErrorNote error={error} action={`read ${what}`} />;
  if (loading) return <p className="muted" aria-live="polite">Loading {what}…</p>;
  return null;
}

/**
 * What the API said about one field of a refused form (problem+json `errors`), to show beside it:
 * the field itself or any part of it (`terms` takes `terms.2`).
 */
export function fieldError(error: unknown, field: string): string | undefined {
  if (!isApiError(error) || !error.problem.errors) return undefined;
  const mine = error.problem.errors.filter((e) => e.field === field || e.field.startsWith(`${field}.`) || e.field.startsWith(`${field}[`));
  return mine.length ? mine.map((e) => (e.field === field ? e.message : `${e.field.slice(field.length + 1)}: ${e.message}`)).join('; ') : undefined;
}
