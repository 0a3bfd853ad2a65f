/**
 * A PostgreSQL cluster that survives its leader's loss, as docs/operations.md describes it, on this
 * machine's loopback: one etcd, two PostgreSQL 15 nodes under Patroni (synchronous_mode) and HAProxy
 * routing to the leader by Patroni's REST check. It runs the files of deploy/ha unchanged: patroni.yml
 * and haproxy.cfg as they are, and the variables of etcd.env, node1.env, node2.env and haproxy.env with
 * this machine's ports and folders as their values (a variable those files name and this one does not
 * set is an error, so the example and the drill cannot drift apart).
 *
 * Needs Debian's `patroni`, `etcd-server`, `haproxy` and `postgresql-15`. As root, Patroni and
 * PostgreSQL run as `postgres`. Everything it starts is stopped by `stop()`, and killed when this
 * process exits without calling it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, constants as fs, createWriteStream, existsSync, readFileSync, readdirSync, type WriteStream } from 'node:fs';
import { chmod, chown, copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { freePort } from '@app/testing';
import { waitFor } from '../../bench/support/stack';

const DEPLOY = resolve('deploy/ha');
const PG_BIN = '/usr/lib/postgresql/15/bin';
const PATRONI = '/usr/bin/patroni';
/** PostgreSQL's socket folder in Debian's build; patroni.yml leaves it as it is. */
const SOCKET_DIR = '/var/run/postgresql';
/** Debian's daemons, without a pyenv or venv on PATH in front of /usr/bin/python3. */
const SYSTEM_PATH = `${PG_BIN}:/usr/sbin:/usr/bin:/sbin:/bin`;
const OUTPUT_KEEP = 64 * 1024;

export type NodeName = 'node1' | 'node2';

export interface ClusterMember {
  name: NodeName;
  /** `leader`, `sync_standby` or `replica`. */
  role: string;
  /** `running`, `streaming`, `starting`, `stopped`, ... */
  state: string;
  timeline?: number;
}

interface Daemon {
  name: string;
  child: ChildProcess;
  exited: Promise<void>;
  running(): boolean;
  output(): string;
}

export interface HaNode {
  readonly name: NodeName;
  readonly pgPort: number;
  readonly restPort: number;
  readonly dir: string;
  readonly dataDir: string;
  patroni: Daemon | null;
}

/** The variables `file` (in deploy/ha) names, each given its value from `values`; all of them, no others. */
export function envFromExample(file: string, values: Record<string, string>): Record<string, string> {
  const names = readFileSync(join(DEPLOY, file), 'utf8')
    .split('\n')
    .map((line) => /^([A-Z0-9_]+)=/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined);
  const missing = names.filter((name) => !(name in values));
  const extra = Object.keys(values).filter((name) => !names.includes(name));
  if (missing.length || extra.length)
    throw new Error(
      `deploy/ha/${file} and the drill disagree: not set ${missing.join(', ') || '-'}; not in the file ${extra.join(', ') || '-'}`,
    );
  return Object.fromEntries(names.map((name) => [name, values[name]]));
}

/** What the drill needs that may be missing from a machine, or '' when nothing is. */
export function missingHaPackages(): string {
  const need: Array<[string, string]> = [
    [PATRONI, 'patroni'],
    ['/usr/bin/etcd', 'etcd-server'],
    ['/usr/sbin/haproxy', 'haproxy'],
    [`${PG_BIN}/postgres`, 'postgresql-15'],
  ];
  return need
    .filter(([path]) => !existsSync(path))
    .map(([, pkg]) => pkg)
    .join(' ');
}

export class HaCluster {
  readonly superuserPassword = randomBytes(12).toString('hex');
  /** Every daemon started, running or not (their output explains a failure). */
  private readonly daemons = new Set<Daemon>();
  private etcd: Daemon | null = null;
  private haproxy: Daemon | null = null;
  private stopped = false;
  private readonly exitHook = () => this.killEverything();

  private constructor(
    readonly dir: string,
    readonly nodes: Record<NodeName, HaNode>,
    readonly haproxyPort: number,
    private readonly ports: { etcdClient: number; etcdPeer: number; haproxyStats: number },
    private readonly secrets: { replication: string; rewind: string },
  ) {}

  /** Starts etcd, both Patroni nodes and HAProxy, and resolves once there is a leader, a sync standby and a route to the leader. */
  static async start(): Promise<HaCluster> {
    const missing = missingHaPackages();
    if (missing) throw new Error(`the HA drill needs Debian's ${missing} (apt-get install -y ${missing})`);
    const asRoot = process.getuid?.() === 0;
    if (asRoot) {
      await mkdir(SOCKET_DIR, { recursive: true });
      const { uid, gid } = postgresIds();
      await chown(SOCKET_DIR, uid, gid);
    } else {
      accessSync(SOCKET_DIR, fs.W_OK); // PostgreSQL puts its socket there (Debian's default)
    }
    const dir = await mkdtemp(join(tmpdir(), 'ha-drill-'));
    await chmod(dir, 0o755);
    await mkdir(join(dir, 'log'));
    const [etcdClient, etcdPeer, haproxyPort, haproxyStats, pg1, pg2, rest1, rest2] = await distinctFreePorts(8);
    const node = (name: NodeName, pgPort: number, restPort: number): HaNode => ({
      name,
      pgPort,
      restPort,
      dir: join(dir, name),
      dataDir: join(dir, name, 'data'),
      patroni: null,
    });
    const cluster = new HaCluster(
      dir,
      { node1: node('node1', pg1, rest1), node2: node('node2', pg2, rest2) },
      haproxyPort,
      { etcdClient, etcdPeer, haproxyStats },
      { replication: randomBytes(12).toString('hex'), rewind: randomBytes(12).toString('hex') },
    );
    process.once('exit', cluster.exitHook);
    try {
      await cluster.startEtcd();
      for (const n of Object.values(cluster.nodes)) {
        await mkdir(n.dir, { mode: 0o700 });
        await copyFile(join(DEPLOY, 'patroni.yml'), join(n.dir, 'patroni.yml'));
        if (asRoot) {
          const { uid, gid } = postgresIds();
          await chown(n.dir, uid, gid);
          await chown(join(n.dir, 'patroni.yml'), uid, gid);
        }
      }
      // The first one bootstraps; the second then clones it (both at once would race for the initialize key: fine, but slower here).
      cluster.startPatroni('node1');
      await waitFor('node1 leads', async () => (await cluster.leader()) === 'node1', 300, 200);
      cluster.startPatroni('node2');
      await cluster.startHaproxy();
      await cluster.waitHealthy();
      return cluster;
    } catch (error) {
      await cluster.stop();
      throw error;
    }
  }

  /** A connection string through HAProxy, to whichever node leads. */
  url(user: string, password: string, database: string): string {
    return `postgres://${user}:${password}@127.0.0.1:${this.haproxyPort}/${database}`;
  }

  get superuserUrl(): string {
    return this.url('postgres', this.superuserPassword, 'postgres');
  }

  /** A connection string straight to one node, bypassing HAProxy. */
  nodeUrl(name: NodeName, user: string, password: string, database: string): string {
    return `postgres://${user}:${password}@127.0.0.1:${this.nodes[name].pgPort}/${database}`;
  }

  /** The members as Patroni sees them (asked of whichever node's REST API answers), or null when none does. */
  async members(): Promise<ClusterMember[] | null> {
    for (const n of Object.values(this.nodes)) {
      try {
        const res = await fetch(`http://127.0.0.1:${n.restPort}/cluster`, { signal: AbortSignal.timeout(800) });
        if (!res.ok) continue;
        const body = (await res.json()) as { members?: ClusterMember[] };
        return body.members ?? [];
      } catch {
        /* that node's REST API is down: ask the other */
      }
    }
    return null;
  }

  /** The node whose Patroni answers GET /primary with 200 (what HAProxy routes to), or null. */
  async leader(): Promise<NodeName | null> {
    for (const n of Object.values(this.nodes)) {
      try {
        const res = await fetch(`http://127.0.0.1:${n.restPort}/primary`, { signal: AbortSignal.timeout(800) });
        await res.arrayBuffer();
        if (res.status === 200) return n.name;
      } catch {
        /* down */
      }
    }
    return null;
  }

  /** True when one node leads and runs, the other is its running sync standby, and HAProxy reaches the leader. */
  async healthy(): Promise<boolean> {
    const members = await this.members();
    if (!members) return false;
    const leaders = members.filter((m) => m.role === 'leader' && m.state === 'running');
    const standbys = members.filter((m) => m.role === 'sync_standby' && (m.state === 'running' || m.state === 'streaming'));
    if (leaders.length !== 1 || standbys.length !== 1) return false;
    return (await this.inRecoveryThroughHaproxy()) === false;
  }

  async waitHealthy(attempts = 600): Promise<void> {
    await waitFor('a leader, a sync standby and HAProxy routing to the leader', () => this.healthy(), attempts, 250);
  }

  /** kill -9 of a node's postmaster (its backends then exit by themselves); Patroni on the node keeps running. */
  killPostmaster(name: NodeName): number {
    const pid = this.postmasterPid(name);
    if (pid === null) throw new Error(`${name} has no running postmaster`);
    process.kill(pid, 'SIGKILL');
    return pid;
  }

  /** The node lost whole: Patroni, the postmaster and every PostgreSQL process of it, with kill -9, at once. */
  killNode(name: NodeName): number[] {
    const node = this.nodes[name];
    const patroni = node.patroni?.child.pid;
    const postmaster = this.postmasterPid(name);
    const pids = [patroni, ...(postmaster ? [postmaster, ...childrenOf(postmaster)] : [])].filter(
      (pid): pid is number => pid !== undefined,
    );
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
    return pids;
  }

  /** Starts (or restarts) a node's Patroni, which starts its PostgreSQL as it sees fit (a standby, with pg_rewind, after a loss). */
  startPatroni(name: NodeName): void {
    const node = this.nodes[name];
    if (node.patroni?.running()) throw new Error(`${name}'s Patroni is running`);
    const env = envFromExample(`${name}.env`, {
      PATRONI_NAME: name,
      PATRONI_RESTAPI_LISTEN: `127.0.0.1:${node.restPort}`,
      PATRONI_RESTAPI_CONNECT_ADDRESS: `127.0.0.1:${node.restPort}`,
      PATRONI_POSTGRESQL_LISTEN: `127.0.0.1:${node.pgPort}`,
      PATRONI_POSTGRESQL_CONNECT_ADDRESS: `127.0.0.1:${node.pgPort}`,
      PATRONI_POSTGRESQL_DATA_DIR: node.dataDir,
      PATRONI_POSTGRESQL_PGPASS: join(node.dir, 'pgpass'),
      PATRONI_ETCD3_HOSTS: `127.0.0.1:${this.ports.etcdClient}`,
      PATRONI_SUPERUSER_PASSWORD: this.superuserPassword,
      PATRONI_REPLICATION_PASSWORD: this.secrets.replication,
      PATRONI_REWIND_PASSWORD: this.secrets.rewind,
    });
    const config = join(node.dir, 'patroni.yml');
    // setpriv execs in place (no fork, unlike runuser), so the child's pid is Patroni's: the one to kill.
    const [command, args] =
      process.getuid?.() === 0
        ? ['setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', '--', PATRONI, config]]
        : [PATRONI, [config]];
    // A clean environment: no PGPASSWORD (it would override Patroni's pgpass and break the standby's base backup).
    node.patroni = this.spawnDaemon(`patroni-${name}`, command, args, { ...env, PATH: SYSTEM_PATH, HOME: node.dir, LC_ALL: 'C' }, node.dir);
  }

  /** Stops everything it started: HAProxy, the standby's Patroni, the leader's, any PostgreSQL left running, etcd. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.stopDaemon(this.haproxy);
    // The standby first, so it does not promote itself when the leader goes.
    const leader = await this.leader().catch(() => null);
    const order: NodeName[] = leader === 'node1' ? ['node2', 'node1'] : ['node1', 'node2'];
    for (const name of order) await this.stopDaemon(this.nodes[name].patroni, 40);
    // A postmaster whose Patroni was killed outlives it: an immediate shutdown (SIGQUIT).
    for (const name of order) {
      const pid = this.postmasterPid(name);
      if (pid === null) continue;
      process.kill(pid, 'SIGQUIT');
      await waitFor(`${name}'s postmaster gone`, async () => !alive(pid), 100, 100).catch(() => process.kill(pid, 'SIGKILL'));
    }
    await this.stopDaemon(this.etcd);
    process.removeListener('exit', this.exitHook);
  }

  /** Removes the cluster's folder, keeping the logs when `keepLogs` (a failed drill): returns the log folder then. */
  async remove(keepLogs: boolean): Promise<string | null> {
    if (!keepLogs) {
      await rm(this.dir, { recursive: true, force: true });
      return null;
    }
    for (const entry of ['node1', 'node2', 'etcd']) await rm(join(this.dir, entry), { recursive: true, force: true });
    return join(this.dir, 'log');
  }

  /** The tail of one daemon's output (`etcd`, `haproxy`, `patroni-node1`, `patroni-node2`). */
  logTail(name: string): string {
    return [...this.daemons]
      .filter((daemon) => daemon.name === name)
      .map((daemon) => daemon.output())
      .join('');
  }

  /** A node's postmaster pid while it runs, else null. */
  postmasterPid(name: NodeName): number | null {
    const file = join(this.nodes[name].dataDir, 'postmaster.pid');
    if (!existsSync(file)) return null;
    const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
    if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return null;
    // Guard against a reused pid: it must be a postgres of this data folder.
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
    return cmdline.includes(this.nodes[name].dataDir) ? pid : null;
  }

  private async inRecoveryThroughHaproxy(): Promise<boolean | null> {
    const client = new Client({ connectionString: this.superuserUrl, connectionTimeoutMillis: 1000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const { rows } = await client.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r');
      return rows[0].r;
    } catch {
      return null;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  private async startEtcd(): Promise<void> {
    const { etcdClient, etcdPeer } = this.ports;
    const env = envFromExample('etcd.env', {
      ETCD_NAME: 'etcd1',
      ETCD_DATA_DIR: join(this.dir, 'etcd'),
      ETCD_LISTEN_CLIENT_URLS: `http://127.0.0.1:${etcdClient}`,
      ETCD_ADVERTISE_CLIENT_URLS: `http://127.0.0.1:${etcdClient}`,
      ETCD_LISTEN_PEER_URLS: `http://127.0.0.1:${etcdPeer}`,
      ETCD_INITIAL_ADVERTISE_PEER_URLS: `http://127.0.0.1:${etcdPeer}`,
      ETCD_INITIAL_CLUSTER: `etcd1=http://127.0.0.1:${etcdPeer}`,
      ETCD_INITIAL_CLUSTER_STATE: 'new',
      ETCD_INITIAL_CLUSTER_TOKEN: `drill-${randomBytes(4).toString('hex')}`,
    });
    this.etcd = this.spawnDaemon('etcd', 'etcd', [], { ...env, PATH: SYSTEM_PATH }, this.dir);
    await waitFor(
      'etcd healthy',
      async () => {
        if (!this.etcd!.running()) throw new Error(`etcd exited: ${this.etcd!.output()}`);
        const res = await fetch(`http://127.0.0.1:${etcdClient}/health`, { signal: AbortSignal.timeout(800) });
        return ((await res.json()) as { health?: string }).health === 'true';
      },
      200,
      100,
    );
  }

  private async startHaproxy(): Promise<void> {
    const env = envFromExample('haproxy.env', {
      HAPROXY_PRIMARY_LISTEN: `127.0.0.1:${this.haproxyPort}`,
      HAPROXY_STATS_LISTEN: `127.0.0.1:${this.ports.haproxyStats}`,
      PATRONI_NODE1_POSTGRES: `127.0.0.1:${this.nodes.node1.pgPort}`,
      PATRONI_NODE1_REST_PORT: String(this.nodes.node1.restPort),
      PATRONI_NODE2_POSTGRES: `127.0.0.1:${this.nodes.node2.pgPort}`,
      PATRONI_NODE2_REST_PORT: String(this.nodes.node2.restPort),
    });
    this.haproxy = this.spawnDaemon(
      'haproxy',
      'haproxy',
      ['-db', '-f', join(DEPLOY, 'haproxy.cfg')],
      { ...env, PATH: SYSTEM_PATH },
      this.dir,
    );
    await waitFor('HAProxy reaches the leader', async () => {
      if (!this.haproxy!.running()) throw new Error(`haproxy exited: ${this.haproxy!.output()}`);
      return (await this.inRecoveryThroughHaproxy()) === false;
    });
  }

  private spawnDaemon(name: string, command: string, args: string[], env: Record<string, string>, cwd: string): Daemon {
    const child = spawn(command, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const log: WriteStream = createWriteStream(join(this.dir, 'log', `${name}.log`), { flags: 'a' });
    let out = '';
    const keep = (chunk: Buffer) => {
      log.write(chunk);
      out += chunk.toString();
      if (out.length > OUTPUT_KEEP * 2) out = out.slice(-OUTPUT_KEEP);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    child.on('error', (error) => keep(Buffer.from(`spawn failed: ${error.message}\n`)));
    const exited = new Promise<void>((done) => child.once('close', () => (log.end(), done())));
    const daemon: Daemon = {
      name,
      child,
      exited,
      running: () => child.exitCode === null && child.signalCode === null,
      output: () => out,
    };
    this.daemons.add(daemon);
    return daemon;
  }

  private async stopDaemon(daemon: Daemon | null, seconds = 15): Promise<void> {
    if (!daemon?.running()) return;
    daemon.child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const gone = await Promise.race([
      daemon.exited.then(() => true),
      new Promise<boolean>((done) => (timer = setTimeout(() => done(false), seconds * 1000))),
    ]);
    clearTimeout(timer);
    if (!gone) {
      daemon.child.kill('SIGKILL');
      await daemon.exited;
    }
  }

  /** On exit without `stop()`: kill -9 whatever still runs, postmasters included. Synchronous, as an exit hook must be. */
  private killEverything(): void {
    for (const daemon of this.daemons) if (daemon.running()) daemon.child.kill('SIGKILL');
    for (const name of ['node1', 'node2'] as const) {
      const pid = this.postmasterPid(name);
      if (pid !== null) process.kill(pid, 'SIGKILL');
    }
  }
}

function postgresIds(): { uid: number; gid: number } {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  if (!line) throw new Error('no postgres user: install postgresql-15');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** The processes whose parent is `pid` (a postmaster's backends and auxiliary processes). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

async function distinctFreePorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}
