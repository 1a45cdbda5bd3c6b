import { type ColumnDef, flexRender, getCoreRowModel, type RowSelectionState, useReactTable } from '@tanstack/react-table';
import { type KeyboardEvent, type ReactNode, useRef } from 'react';

export interface TableProps<T extends { id: string }> {
  caption: string;
  rows: T[];
  columns: Array<ColumnDef<T, any>>;
  /** Rows the person can pick (a checkbox per row and one for the page). */
  selection?: { value: RowSelectionState; onChange: (next: RowSelectionState) => void };
  /** Keys pressed on a focused row (row-level shortcuts, such as triage). */
  onRowKey?: (row: T, event: KeyboardEvent<HTMLTableRowElement>) => void;
  empty?: ReactNode;
}

/**
 * A table drawn by TanStack Table (sorting and paging are the API's: the table shows a page). Rows
 * are focusable: j/k or the arrow keys move between them, as in a mail inbox.
 */
export function DataTable<T extends { id: string }>({ caption, rows, columns, selection, onRowKey, empty }: TableProps<T>) {
  const body = useRef<HTMLTableSectionElement>(null);
  const table = useReactTable<T>({
    data: rows,
    columns: selection
      ? [
          {
            id: 'select',
            header: ({ table }) => (
              <input type="checkbox" aria-label="Select every row on this page" checked={table.getIsAllRowsSelected()} onChange={table.getToggleAllRowsSelectedHandler()} />
            ),
            cell: ({ row }) => <input type="checkbox" aria-label={`Select row ${row.index + 1}`} checked={row.getIsSelected()} onChange={row.getToggleSelectedHandler()} />,
          },
          ...columns,
        ]
      : columns,
    getRowId: (row) => row.id,
    getCoreRowModel: getCoreRowModel(),
    enableRowSelection: Boolean(selection),
    state: selection ? { rowSelection: selection.value } : {},
    onRowSelectionChange: (updater) => selection?.onChange(typeof updater === 'function' ? updater(selection.value) : updater),
  });

  function move(from: HTMLTableRowElement, by: number) {
    const all = Array.from(body.current?.querySelectorAll<HTMLTableRowElement>('tr[data-row]') ?? []);
    all[all.indexOf(from) + by]?.focus();
  }

  return (
    // A table wider than a phone scrolls sideways: its box takes the focus, so the keyboard can scroll it.
    <div className="table-wrap" tabIndex={0} role="region" aria-label={caption}>
      <table>
        <caption className="sr-only">{caption}</caption>
        <thead>
          {table.getHeaderGroups().map((group) => (
            <tr key={group.id}>
              {group.headers.map((header) => (
                <th key={header.id} scope="col">
                  {header.isPlaceholder ? null : flexRender(header.column.columnDef.header, header.getContext())}
                </th>
              ))}
            </tr>
          ))}
        </thead>
        <tbody ref={body}>
          {table.getRowModel().rows.map((row) => (
            <tr
              key={row.id}
              data-row={row.id}
              tabIndex={0}
              aria-selected={selection ? row.getIsSelected() : undefined}
              className={row.getIsSelected() ? 'selected' : undefined}
              onKeyDown={(event) => {
                if (event.target !== event.currentTarget) return;
                if (event.key === 'j' || event.key === 'ArrowDown') return (event.preventDefault(), move(event.currentTarget, 1));
                if (event.key === 'k' || event.key === 'ArrowUp') return (event.preventDefault(), move(event.currentTarget, -1));
                if (selection && (event.key === 'x' || event.key === ' ')) return (event.preventDefault(), row.toggleSelected());
                onRowKey?.(row.original, event);
              }}
            >
              {row.getVisibleCells().map((cell) => (
                <td key={cell.id} data-label={typeof cell.column.columnDef.header === 'string' ? cell.column.columnDef.header : undefined}>
                  {flexRender(cell.column.columnDef.cell, cell.getContext())}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      {rows.length === 0 && <p className="muted empty">{empty ?? 'Nothing here yet.'}</p>}
    </div>
  );
}

/** Page links for a `{count, page_size}` list. */
export function Pager({ count, page, pageSize, onPage, estimated }: { count: number; page: number; pageSize: number; onPage: (page: number) => void; estimated?: boolean }) {
  const last = Math.max(1, Math.ceil(count / pageSize));
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        Previous
      </button>
      <span>
        Page {page} of {estimated ? 'about ' : ''}
        {last.toLocaleString()} · {estimated ? 'about ' : ''}
        {count.toLocaleString()} {estimated ? '(estimated)' : ''} in all
      </span>
      <button type="button" disabled={page >= last} onClick={() => onPage(page + 1)}>
        Next
      </button>
    </nav>
  );
}
