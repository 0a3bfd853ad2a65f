import { table } from './table';
import { terminalCell, terminalJson, terminalText } from './terminal-text';

// An error text as a vendor might send it: colour, clear screen, a window title (OSC), a C1 CSI, a bidi override.
const HOSTILE = 'auth \u001b[31mrefused\u001b[0m\u001b[2J\u001b]0;owned\u0007 \u009b6n\u202eevil\u0000!';

describe('what the CLI writes to a terminal', () => {
  it('drops every control character from text, keeping the line breaks the CLI lays out with', () => {
    expect(terminalText(`${HOSTILE}\nnext line\twith a tab`)).toBe('auth [31mrefused[0m[2J]0;owned 6nevil!\nnext line\twith a tab');
  });

  it('makes a cell one line: no control characters, no line breaks or tabs', () => {
    expect(terminalCell('a\r\nb\tc\u001b[1Ad')).toBe('a b c[1Ad');
  });

  it('lays out a table whose cells came from a provider without letting one escape', () => {
    const text = table(['PROVIDER', 'LAST ERROR'], [['primary', HOSTILE]]);
    expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    expect(text.split('\n')).toHaveLength(2);
  });

  it('writes JSON with C1 controls and overrides as \\u escapes: the same value, nothing raw', () => {
    const body = { lastError: HOSTILE };
    const printed = terminalJson(body);
    expect(printed).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    expect(JSON.parse(printed)).toEqual(body);
  });
});
