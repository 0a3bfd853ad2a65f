import { terminalCell } from './terminal-text';

/** Plain text columns, padded to the widest cell; the last column is never padded. Cells hold no control characters. */
export function table(headers: string[], rows: Array<Array<string | number | boolean | null | undefined>>): string {
  const cells = [
    headers,
    ...rows.map((row) => row.map((cell) => (cell === null || cell === undefined || cell === '' ? '-' : terminalCell(String(cell))))),
  ];
  const widths = headers.map((_, column) => Math.max(...cells.map((row) => row[column]?.length ?? 0)));
  return cells
    .map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]))).join('  '))
    .join('\n');
}

export function percent(rate: number | undefined): string {
  return typeof rate === 'number' ? `${(rate * 100).toFixed(1)}%` : '-';
}
