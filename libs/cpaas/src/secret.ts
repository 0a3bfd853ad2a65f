/**
 * A credential that must never be printed: logging, `JSON.stringify`, `util.inspect` or string
 * interpolation all show `[secret]`. Only the adapter that signs or authenticates with it calls
 * `reveal()`.
 */
import { inspect } from 'node:util';

export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return '[secret]';
  }

  toJSON(): string {
    return '[secret]';
  }

  [inspect.custom](): string {
    return '[secret]';
  }
}
