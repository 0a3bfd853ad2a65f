/**
 * A statement's class for metrics: the name it carries in a leading comment (`/* session.reserve *\/`),
 * else its verb and first table (`select api_keys`, `update sessions`), else its first word. Classes
 * come from the code's own SQL, never from values, so the label set stays small; past `MAX_CLASSES`
 * the rest count as `other`.
 */
const NAMED = /^\s*\/\*\s*([a-z][a-z0-9_.-]{0,48})\s*\*\//i;
const TRANSACTION = /^\s*(start transaction|begin|commit|rollback|savepoint|release savepoint)\b/i;
const WRITE = /^\s*(insert\s+into|update|delete\s+from)\s+"?([a-z_][a-z0-9_]*)"?/i;
const WITH_WRITE =
  /\b(insert\s+into|delete\s+from)\s+"?([a-z_][a-z0-9_]*)"?|(?<!\b(?:for|do|key)\s+)\bupdate\s+"?([a-z_][a-z0-9_]*)"?\s+set\b/i;
const READ = /^\s*select\b[\s\S]*?\bfrom\s+"?([a-z_][a-z0-9_]*)"?/i;
const FIRST_WORD = /^\s*([a-z]+)/i;

const MAX_CLASSES = 64;

export function statementClass(sql: string): string {
  const named = NAMED.exec(sql);
  if (named) return named[1].toLowerCase();
  if (TRANSACTION.test(sql)) return 'transaction';
  const write = WRITE.exec(sql);
  if (write) return `${verb(write[1])} ${write[2].toLowerCase()}`;
  if (/^\s*with\b/i.test(sql)) {
    const inner = WITH_WRITE.exec(sql);
    if (inner) return inner[3] ? `with update ${inner[3].toLowerCase()}` : `with ${verb(inner[1])} ${inner[2].toLowerCase()}`;
    return 'with select';
  }
  const read = READ.exec(sql);
  if (read) return `select ${read[1].toLowerCase()}`;
  return FIRST_WORD.exec(sql)?.[1].toLowerCase() ?? 'other';
}

function verb(phrase: string): string {
  return phrase.split(/\s+/)[0].toLowerCase();
}

/** Remembers the classes seen; a new one past the cap is `other`. */
export class StatementClasses {
  private readonly seen = new Set<string>();

  constructor(private readonly max = MAX_CLASSES) {}

  of(sql: string): string {
    const name = statementClass(sql);
    if (this.seen.has(name)) return name;
    if (this.seen.size >= this.max) return 'other';
    this.seen.add(name);
    return name;
  }
}
