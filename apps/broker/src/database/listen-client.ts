/**
 * The replica's one LISTEN connection: a dedicated pg client (LISTEN needs a session of its own, a
 * pooled connection would lose it) that any part of the app subscribes to by channel. A lost
 * connection is re-made every `reconnectMs` and every channel listened to again; subscribers hear
 * about it through `onReconnect` (to re-read what they may have missed) and `connected$`.
 */
import { Client } from 'pg';
import { BehaviorSubject, distinctUntilChanged, type Observable } from 'rxjs';

export type ChannelHandler = (payload: string) => void;

export interface ListenClientOptions {
  /** Pause before re-making a lost connection. */
  readonly reconnectMs?: number;
  readonly applicationName?: string;
  readonly onWarning?: (message: string) => void;
}

/** What a subscriber needs: subscribe to a channel, and learn when the connection came back. */
export interface ChannelListener {
  subscribe(channel: string, handler: ChannelHandler): () => void;
  onReconnect(handler: () => void): () => void;
}

const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;

export class ListenClient implements ChannelListener {
  private readonly handlers = new Map<string, Set<ChannelHandler>>();
  private readonly reconnectHandlers = new Set<() => void>();
  private readonly connectedSubject = new BehaviorSubject(false);
  /** True while the connection is up and listening to every subscribed channel. */
  readonly connected$: Observable<boolean> = this.connectedSubject.pipe(distinctUntilChanged());
  private client: Client | null = null;
  private connecting: Promise<void> | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private attempted = false;
  /** LISTENs go one after another: pg warns (and will refuse) a query sent while another is running. */
  private listening: Promise<unknown> = Promise.resolve();
  private stopped = false;
  private readonly reconnectMs: number;

  constructor(
    private readonly url: string,
    private readonly options: ListenClientOptions = {},
  ) {
    this.reconnectMs = options.reconnectMs ?? 1_000;
  }

  get connected(): boolean {
    return this.connectedSubject.value;
  }

  /** Connects (once); resolves whether or not that worked: a failure is retried in the background. */
  start(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.connecting ??= this.connect().finally(() => (this.connecting = null));
    return this.connecting;
  }

  subscribe(channel: string, handler: ChannelHandler): () => void {
    if (!CHANNEL.test(channel)) throw new Error(`not a channel name: ${channel}`);
    let set = this.handlers.get(channel);
    if (!set) {
      set = new Set();
      this.handlers.set(channel, set);
      const client = this.client;
      if (client && this.connected) void this.listen(client, channel).catch((error: Error) => this.lost(client, error));
    }
    set.add(handler);
    void this.start();
    return () => set.delete(handler);
  }

  onReconnect(handler: () => void): () => void {
    this.reconnectHandlers.add(handler);
    return () => this.reconnectHandlers.delete(handler);
  }

  /** Nest calls this on app close. */
  onApplicationShutdown(): Promise<void> {
    return this.stop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    await this.connecting;
    const client = this.client;
    this.client = null;
    this.connectedSubject.next(false);
    this.connectedSubject.complete();
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.stopped || this.client) return;
    const client = new Client({ connectionString: this.url, application_name: this.options.applicationName ?? 'session-broker-listen' });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    client.on('notification', (message) => {
      const set = this.handlers.get(message.channel);
      if (!set || message.payload === undefined) return;
      for (const handler of set) {
        try {
          handler(message.payload);
        } catch (error) {
          this.options.onWarning?.(`LISTEN handler for ${message.channel} failed: ${(error as Error).message}`);
        }
      }
    });
    this.client = client;
    // After any earlier attempt, notifications may have been missed: subscribers re-read.
    const again = this.attempted;
    this.attempted = true;
    try {
      await client.connect();
      for (const channel of this.handlers.keys()) await this.listen(client, channel);
      if (this.stopped) {
        await client.end().catch(() => undefined);
        return;
      }
      this.connectedSubject.next(true);
      if (again) for (const handler of this.reconnectHandlers) handler();
    } catch (error) {
      this.lost(client, error as Error);
    }
  }

  private listen(client: Client, channel: string): Promise<unknown> {
    const next = this.listening.then(() => client.query(`LISTEN ${channel}`));
    this.listening = next.catch(() => undefined);
    return next;
  }

  private lost(client: Client, error: Error): void {
    if (this.client !== client) return;
    this.client = null;
    this.connectedSubject.next(false);
    void client.end().catch(() => undefined);
    if (this.stopped) return;
    this.options.onWarning?.(`LISTEN connection lost (${error.message}); reconnecting in ${this.reconnectMs} ms`);
    if (this.reconnectTimer) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      void this.start();
    }, this.reconnectMs);
    this.reconnectTimer.unref();
  }
}
