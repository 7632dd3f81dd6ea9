// A list as a table that scrolls sideways when wide; under 390 px each row is a card whose cells
// carry their column's name (data-label).
import type { ReactNode } from "react";

export interface Column<T> {
  /** The header, and each cell's data-label. */
  label: string;
  cell: (row: T, index: number) => ReactNode;
  /** The cells' class. */
  className?: string;
  /** A number: right-aligned, header included. */
  number?: boolean;
}

/**
 * Rows with an id, one column each (`false` leaves one out), and when `actions` is given a last
 * column of buttons under a visually hidden "Actions" header.
 */
export function DataTable<T extends { id: string }>({
  rows,
  columns,
  actions,
}: {
  rows: readonly T[];
  columns: (Column<T> | false)[];
  actions?: (row: T) => ReactNode;
}) {
  const shown = columns.filter((column) => column !== false);
  return (
    <div className="table-scroll">
      <table className="table">
        <thead>
          <tr>
            {shown.map((column) => (
              <th key={column.label} scope="col" className={column.number ? "cell-number" : undefined}>
                {column.label}
              </th>
            ))}
            {actions && (
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, index) => (
            <tr key={row.id}>
              {shown.map((column) => (
                <td
                  key={column.label}
                  data-label={column.label}
                  className={
                    [column.number && "cell-number", column.className].filter(Boolean).join(" ") || undefined
                  }
                >
                  {column.cell(row, index)}
                </td>
              ))}
              {actions && <td data-label="">{actions(row)}</td>}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
