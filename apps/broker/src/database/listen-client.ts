/**
 * The replica's one LISTEN connection: a dedicated pg client (LISTEN needs a session of its own, a
 * pooled connection would lose it) that any part of the app subscribes to by channel. A lost
 * connection is re-made with backoff (`reconnect`: 250 ms doubling to 5 s, jittered) and every channel
 * listened to again; subscribers hear about it through `onReconnect` (to re-read what they may have
 * missed) and `connected$`. A failed LISTEN counts as a lost connection: after a database failover
 * the first one may reach a server still finishing its promotion (`cannot execute LISTEN during recovery`).
 *
 * While connected it sends a `SELECT 1` every `heartbeatMs`: a connection whose server vanished without
 * closing it (a host lost, a network cut) answers nothing, and is replaced once `heartbeatTimeoutMs`
 * has passed; and a proxy in front of PostgreSQL (HAProxy's `timeout client`) never sees it idle.
 */
import { Client } from 'pg';
import { BehaviorSubject, distinctUntilChanged, type Observable } from 'rxjs';
import { LISTEN_RECONNECT, reconnectDelayMs, type Backoff } from './reconnect-backoff';

export type ChannelHandler = (payload: string) => void;

interface ListenClientOptions {
  /** Pauses before re-making a lost connection (LISTEN_RECONNECT unless given). */
  readonly reconnect?: Backoff;
  /** Milliseconds between heartbeats while connected (30 000); 0: none. */
  readonly heartbeatMs?: number;
  /** A heartbeat unanswered this long means the connection is dead (10 000). */
  readonly heartbeatTimeoutMs?: number;
  readonly random?: () => number;
  readonly applicationName?: string;
  readonly onWarning?: (message: string) => void;
}

const LISTEN_HEARTBEAT_MS = 30_000;
const LISTEN_HEARTBEAT_TIMEOUT_MS = 10_000;

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
  private heartbeatTimer: NodeJS.Timeout | null = null;
  /** Failed attempts since the connection was last up: the backoff's step. */
  private failures = 0;
  private attempted = false;
  /** LISTENs go one after another: pg warns (and will refuse) a query sent while another is running. */
  private listening: Promise<unknown> = Promise.resolve();
  private stopped = false;
  private readonly reconnect: Backoff;
  private readonly heartbeatMs: number;
  private readonly heartbeatTimeoutMs: number;

  constructor(
    private readonly url: string,
    private readonly options: ListenClientOptions = {},
  ) {
    this.reconnect = options.reconnect ?? LISTEN_RECONNECT;
    this.heartbeatMs = options.heartbeatMs ?? LISTEN_HEARTBEAT_MS;
    this.heartbeatTimeoutMs = options.heartbeatTimeoutMs ?? LISTEN_HEARTBEAT_TIMEOUT_MS;
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
    this.stopHeartbeat();
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
      this.failures = 0;
      this.connectedSubject.next(true);
      this.startHeartbeat(client);
      if (again) for (const handler of this.reconnectHandlers) handler();
    } catch (error) {
      this.lost(client, error as Error);
    }
  }

  private listen(client: Client, channel: string): Promise<unknown> {
    return this.inTurn(() => client.query(`LISTEN ${channel}`));
  }

  private inTurn<T>(statement: () => Promise<T>): Promise<T> {
    const next = this.listening.then(statement);
    this.listening = next.catch(() => undefined);
    return next;
  }

  private startHeartbeat(client: Client): void {
    if (this.heartbeatMs <= 0) return;
    this.stopHeartbeat();
    this.heartbeatTimer = setTimeout(() => void this.heartbeat(client), this.heartbeatMs);
    this.heartbeatTimer.unref();
  }

  private stopHeartbeat(): void {
    if (this.heartbeatTimer) clearTimeout(this.heartbeatTimer);
    this.heartbeatTimer = null;
  }

  private async heartbeat(client: Client): Promise<void> {
    this.heartbeatTimer = null;
    if (this.client !== client || this.stopped) return;
    let timeout: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.inTurn(() => client.query('SELECT 1')),
        new Promise<never>((_, reject) => {
          timeout = setTimeout(
            () => reject(new Error(`no answer to a heartbeat within ${this.heartbeatTimeoutMs} ms`)),
            this.heartbeatTimeoutMs,
          );
        }),
      ]);
      if (this.client === client) this.startHeartbeat(client);
    } catch (error) {
      this.lost(client, error as Error);
    } finally {
      clearTimeout(timeout);
    }
  }

  private lost(client: Client, error: Error): void {
    if (this.client !== client) return;
    this.client = null;
    this.stopHeartbeat();
    // The next connection's statements must not queue behind one the lost connection never answers.
    this.listening = Promise.resolve();
    this.connectedSubject.next(false);
    void client.end().catch(() => undefined);
    if (this.stopped || this.reconnectTimer) return;
    this.failures += 1;
    const delay = reconnectDelayMs(this.failures, this.reconnect, this.options.random);
    // One line per loss; the retries of one outage are counted, not each logged.
    if (this.failures === 1) this.options.onWarning?.(`LISTEN connection lost (${error.message}); reconnecting with backoff`);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      void this.start();
    }, delay);
    this.reconnectTimer.unref();
  }
}
