/**
 * The parameters of a Twilio API request, read as Twilio reads them: form fields (or query parameters) by
 * their PascalCase names, each once, except lists, which repeat the name (`Participants=…&Participants=…`).
 * Every problem is Twilio's 80701 naming the parameter; parameters Twilio's API does not have are ignored,
 * as Twilio does.
 */
import { invalidParameter } from './twilio-error';

const HTTP_URL = /^https?:\/\/[^\s/?#]+[^\s]*$/i;
/** What Twilio's clients send (`serialize.iso8601DateTime`: no milliseconds) and ISO 8601 with them. */
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?(Z|[+-]\d{2}:\d{2})$/;

export class TwilioParams {
  private constructor(private readonly values: Record<string, unknown>) {}

  /** A request's parsed form body (or query), whatever its shape. */
  static of(source: unknown): TwilioParams {
    return new TwilioParams(
      typeof source === 'object' && source !== null && !Array.isArray(source) ? (source as Record<string, unknown>) : {},
    );
  }

  has(name: string): boolean {
    return this.values[name] !== undefined;
  }

  string(name: string, options: { required?: boolean; max?: number } = {}): string | undefined {
    const value = this.values[name];
    if (value === undefined) {
      if (options.required) throw invalidParameter(name, `${name} is required.`);
      return undefined;
    }
    if (typeof value !== 'string') throw invalidParameter(name, `${name} must be given once, as text.`);
    if (options.required && value.trim() === '') throw invalidParameter(name, `${name} must not be empty.`);
    if (options.max !== undefined && value.length > options.max)
      throw invalidParameter(name, `${name} must be at most ${options.max} characters.`);
    if (/[\u0000-\u001f\u007f]/.test(value)) throw invalidParameter(name, `${name} must not contain control characters.`);
    return value;
  }

  integer(name: string, range: { min: number; max: number }): number | undefined {
    const text = this.string(name);
    if (text === undefined) return undefined;
    if (!/^-?\d{1,10}$/.test(text)) throw invalidParameter(name, `${name} must be a whole number.`);
    const value = Number(text);
    if (value < range.min || value > range.max) throw invalidParameter(name, `${name} must be between ${range.min} and ${range.max}.`);
    return value;
  }

  boolean(name: string): boolean | undefined {
    const text = this.string(name);
    if (text === undefined) return undefined;
    // Twilio's clients send true/false; its docs write True/False.
    if (/^true$/i.test(text)) return true;
    if (/^false$/i.test(text)) return false;
    throw invalidParameter(name, `${name} must be true or false.`);
  }

  oneOf<T extends string>(name: string, allowed: readonly T[]): T | undefined {
    const text = this.string(name);
    if (text === undefined) return undefined;
    if (!(allowed as readonly string[]).includes(text)) throw invalidParameter(name, `${name} must be one of ${allowed.join(', ')}.`);
    return text as T;
  }

  /** An http(s) URL; `''` clears it (null), as Twilio's updates do. */
  url(name: string): string | null | undefined {
    const text = this.string(name, { max: 2048 });
    if (text === undefined) return undefined;
    if (text === '') return null;
    if (!HTTP_URL.test(text)) throw invalidParameter(name, `${name} must be an http or https URL.`);
    return text;
  }

  dateTime(name: string): Date | undefined {
    const text = this.string(name);
    if (text === undefined) return undefined;
    const at = new Date(text);
    if (!ISO_DATE_TIME.test(text) || Number.isNaN(at.getTime()) || !isCalendarDate(text.slice(0, 10)))
      throw invalidParameter(name, `${name} must be an ISO 8601 date and time, like 2030-07-30T20:00:00Z.`);
    return at;
  }

  /** A repeated parameter's values, in order; none given: []. */
  list(name: string): string[] {
    const value = this.values[name];
    if (value === undefined) return [];
    const values = Array.isArray(value) ? value : [value];
    if (values.some((v) => typeof v !== 'string')) throw invalidParameter(name, `each ${name} must be text.`);
    return values as string[];
  }
}

/** `2030-02-30` parses as March 2nd: a day that does not exist is refused, not moved. */
function isCalendarDate(day: string): boolean {
  const [year, month, date] = day.split('-').map(Number);
  const parsed = new Date(Date.UTC(year, month - 1, date));
  return parsed.getUTCFullYear() === year && parsed.getUTCMonth() === month - 1 && parsed.getUTCDate() === date;
}
