/**
 * What the CLI writes to an operator's terminal comes partly from elsewhere: a provider's error text, an
 * account's name, a key's label. A control character there (ESC, a C1 control such as CSI U+009B, a
 * bidirectional override) could move the cursor, rewrite the screen or retitle the window, so none reaches the
 * terminal: text output drops them, JSON output writes them as `\u` escapes (JSON.stringify leaves C1 and the
 * overrides as they are).
 */

/** C0 controls but the line breaks and tabs the CLI lays out with, DEL, C1 controls, bidirectional overrides. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** A line, or lines, the CLI prints as text: every control character of the data dropped. */
export function terminalText(text: string): string {
  return text.replace(CONTROL, '');
}

/** A table cell or a one-line field: control characters dropped, and line breaks and tabs too (they would break the layout). */
export function terminalCell(text: string): string {
  return terminalText(text).replace(/[\n\t\r]/g, ' ');
}

/** JSON as `--json` prints it: the same value, with what JSON.stringify leaves raw written as `\u` escapes. */
export function terminalJson(body: unknown): string {
  return JSON.stringify(body, null, 2).replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
